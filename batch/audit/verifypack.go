package audit

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/payout/payout/ledger"
)

// PackReport is what VerifyPack found: nothing wrong when Findings is empty.
type PackReport struct {
	Info     PackInfo
	Members  int
	Events   int
	Findings []string
}

// maxMemberBytes bounds what VerifyPack reads of one member: a pack is made of reports and JSON
// lines, and a forged one must not exhaust memory.
const maxMemberBytes = 1 << 30

// VerifyPack checks an evidence pack without the ledger: every member against SHA256SUMS (and no
// member unlisted); every event's hash against its content and prev_hash; consecutive events
// against each other's hashes; payloads against their digests where the salt is there; the chain
// head the reports print against run.json's; and the input file, when packed, against its
// SHA-256.
//
// What that proves: the pack is as its SHA256SUMS says (anyone can write a new SHA256SUMS, so
// hold the pack's own SHA-256 elsewhere), and its events are the events of a chain whose head is
// run.json's chain_head, unchanged since, as far as their own hashes go. Tying them to the
// ledger's chain needs the chain head from somewhere else: a report written at the time, or
// `payout audit verify` on the ledger, which prints its head.
func VerifyPack(r io.ReaderAt, size int64) (PackReport, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return PackReport{}, fmt.Errorf("not a zip file: %w", err)
	}
	members := map[string][]byte{}
	for _, f := range zr.File {
		data, err := readMember(f)
		if err != nil {
			return PackReport{}, err
		}
		if _, dup := members[f.Name]; dup {
			return PackReport{}, fmt.Errorf("member %s is there twice", f.Name)
		}
		members[f.Name] = data
	}
	var rep PackReport
	rep.Members = len(members)
	checkSums(members, &rep)
	if err := json.Unmarshal(members[runMember], &rep.Info); err != nil || rep.Info.Format != PackFormat {
		rep.Findings = append(rep.Findings, fmt.Sprintf("%s is missing or not a %s record", runMember, PackFormat))
		return rep, nil
	}
	head, err := ledger.ParseChainHead(rep.Info.ChainHead)
	if err != nil {
		rep.Findings = append(rep.Findings, fmt.Sprintf("%s: %v", runMember, err))
	}
	checkEvents(members[eventsMember], head, &rep)
	checkReportHeads(members, rep.Info.ChainHead, &rep)
	checkInput(members, rep.Info.InputSHA256, &rep)
	return rep, nil
}

func readMember(f *zip.File) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("member %s: %w", f.Name, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxMemberBytes+1))
	if err != nil {
		return nil, fmt.Errorf("member %s: %w", f.Name, err)
	}
	if len(data) > maxMemberBytes {
		return nil, fmt.Errorf("member %s is larger than %d bytes", f.Name, maxMemberBytes)
	}
	return data, nil
}

// checkSums compares every member with SHA256SUMS.
func checkSums(members map[string][]byte, rep *PackReport) {
	listed := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(members[sumsMember])), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if ok {
			listed[name] = sum
		}
	}
	if len(listed) == 0 {
		rep.Findings = append(rep.Findings, sumsMember+" is missing or empty")
		return
	}
	var names []string
	for n := range members {
		names = append(names, n)
	}
	for n := range listed {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		if n == sumsMember || i > 0 && names[i-1] == n {
			continue
		}
		data, present := members[n]
		want, ok := listed[n]
		switch {
		case !present:
			rep.Findings = append(rep.Findings, fmt.Sprintf("%s is listed in %s but missing", n, sumsMember))
		case !ok:
			rep.Findings = append(rep.Findings, fmt.Sprintf("%s is not listed in %s (added)", n, sumsMember))
		default:
			sum := sha256.Sum256(data)
			if hex.EncodeToString(sum[:]) != want {
				rep.Findings = append(rep.Findings, fmt.Sprintf("%s does not match its SHA-256 in %s (changed)", n, sumsMember))
			}
		}
	}
}

// checkEvents checks every event of the pack on its own, and each against the one before it
// when their ids follow each other (a run's events are not consecutive in the ledger's chain).
func checkEvents(data []byte, head ledger.ChainHead, rep *PackReport) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), maxMemberBytes)
	var prev ledger.ChainHead
	for line := 1; sc.Scan(); line++ {
		var e ledger.EvidenceEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			rep.Findings = append(rep.Findings, fmt.Sprintf("%s line %d: not an event: %v", eventsMember, line, err))
			continue
		}
		rep.Events++
		var problems []string
		if ledger.HashEvent(e.ChainEvent) != e.Hash {
			problems = append(problems, "its content does not match its hash")
		}
		if e.ID <= prev.ID {
			problems = append(problems, fmt.Sprintf("it is out of order (after event %d)", prev.ID))
		} else if e.ID == prev.ID+1 && e.PrevHash != prev.Hash {
			problems = append(problems, fmt.Sprintf("its prev_hash is not the hash of event %d", prev.ID))
		}
		if e.ID > head.ID || e.ID == head.ID && e.Hash != head.Hash {
			problems = append(problems, "it does not fit the chain head "+head.String())
		}
		if e.Salt != "" && e.Payload != "" && e.Payload != ledger.PurgedPayload && ledger.PayloadDigest(e.Salt, e.Payload) != e.Personal {
			problems = append(problems, "its payload does not match its digest")
		}
		if len(problems) > 0 {
			rep.Findings = append(rep.Findings, fmt.Sprintf("event %d (payout %s): %s", e.ID, e.Ref, strings.Join(problems, "; ")))
		}
		prev = ledger.ChainHead{ID: e.ID, Hash: e.Hash}
	}
	if err := sc.Err(); err != nil {
		rep.Findings = append(rep.Findings, fmt.Sprintf("%s: %v", eventsMember, err))
	}
	if rep.Events == 0 {
		rep.Findings = append(rep.Findings, eventsMember+" holds no events")
	}
}

var htmlChainHead = regexp.MustCompile(`id="chain-head">([^<]*)<`)

// checkReportHeads compares the chain head each report prints (HTML and XLSX; the CSV holds rows
// only) with run.json's.
func checkReportHeads(members map[string][]byte, head string, rep *PackReport) {
	found := 0
	for _, name := range sortedNames(members) {
		data := members[name]
		if !strings.HasPrefix(name, reportsDir) {
			continue
		}
		var got string
		switch {
		case strings.HasSuffix(name, ".html"):
			m := htmlChainHead.FindSubmatch(data)
			if m == nil {
				rep.Findings = append(rep.Findings, name+" prints no chain head")
				continue
			}
			got = string(m[1])
		case strings.HasSuffix(name, ".xlsx"):
			var err error
			if got, err = xlsxChainHead(data); err != nil {
				rep.Findings = append(rep.Findings, fmt.Sprintf("%s: %v", name, err))
				continue
			}
		default:
			continue
		}
		found++
		if got != head {
			rep.Findings = append(rep.Findings, fmt.Sprintf("%s prints chain head %s, %s says %s", name, got, runMember, head))
		}
	}
	if found == 0 {
		rep.Findings = append(rep.Findings, "the pack holds no report that prints a chain head")
	}
}

// xlsxChainHead reads the chain head from the Summary sheet of a run's XLSX report.
func xlsxChainHead(data []byte) (string, error) {
	f, err := excelize.OpenReader(bytes.NewReader(data))
	if err != nil {
		return "", err
	}
	defer f.Close()
	rows, err := f.GetRows("Summary")
	if err != nil {
		return "", err
	}
	for _, r := range rows {
		if len(r) >= 2 && r[0] == "Audit chain head" {
			return r[1], nil
		}
	}
	return "", fmt.Errorf("no chain head in sheet Summary")
}

// checkInput compares a packed input file with the SHA-256 the run recorded.
func checkInput(members map[string][]byte, want string, rep *PackReport) {
	for _, name := range sortedNames(members) {
		data := members[name]
		if !strings.HasPrefix(name, inputDir) {
			continue
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != want {
			rep.Findings = append(rep.Findings, fmt.Sprintf("%s has SHA-256 %s, the run read %s", name, got, want))
		}
	}
}

func sortedNames(members map[string][]byte) []string {
	names := make([]string, 0, len(members))
	for n := range members {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
