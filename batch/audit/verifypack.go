package audit

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/payout/payout/batch/signature"
	"github.com/payout/payout/ledger"
)

// PackReport is what VerifyPack found: nothing wrong when Findings is empty.
type PackReport struct {
	Info     PackInfo
	Members  int
	Events   int
	Payouts  int // payouts whose events the pack holds
	Rows     int // report rows checked against those events
	Findings []string
}

// PackLimits bound what VerifyPack reads, whatever a pack's members claim: it streams every
// member and keeps at most one record of each payout, so its memory is bounded by these.
type PackLimits struct {
	Member  int64 // uncompressed bytes of one member
	Total   int64 // uncompressed bytes of all members together
	Members int   // members in the pack
	Payouts int   // distinct payouts in events.jsonl
	Small   int64 // uncompressed bytes of run.json and SHA256SUMS, which are read whole
	XLSX    int64 // uncompressed bytes of an XLSX report, which its reader holds whole
	Line    int   // bytes of one line of events.jsonl
}

// DefaultPackLimits fit the packs of runs of a hundred thousand rows with room to spare.
var DefaultPackLimits = PackLimits{Member: 1 << 30, Total: 2 << 30, Members: 10_000, Payouts: 500_000,
	Small: 64 << 20, XLSX: 256 << 20, Line: 1 << 20}

// ErrPackTooLarge says that a pack's members claim or hold more than PackLimits allows.
var ErrPackTooLarge = errors.New("the pack is larger than a verifier reads")

// VerifyPack checks an evidence pack without the ledger, within DefaultPackLimits; see
// VerifyPackWithin.
func VerifyPack(r io.ReaderAt, size int64) (PackReport, error) {
	return VerifyPackWithin(r, size, DefaultPackLimits)
}

// VerifyPackWithin checks an evidence pack without the ledger:
//   - every member against SHA256SUMS, and no member unlisted;
//   - every event's hash against its content, consecutive events against each other's hashes,
//     and the chain head the pack was cut at; payloads against their digests where the salt is
//     there;
//   - each payout's events from the event that recorded it on, every one taking the payout from
//     the state the one before left it in, so that an event taken out shows;
//   - every row of every report (CSV, XLSX, HTML) against the state its payout's events give:
//     state, amount, provider, bank, invoice number, status, and name and account number through
//     their salted digest (or the masked forms of a purge); a row whose payout has no events;
//   - the chain head and the input's SHA-256 the reports print against run.json's, and the packed
//     input file against the SHA-256 the run recorded.
//
// What that proves: the pack is consistent in itself, so that changing a row, an event, an
// amount or a digest means forging the whole chain from the first event changed. Anyone can do
// that with a pack that is not signed: tie it to the ledger by its chain head (printed by
// `payout audit verify`) or by a signature. It returns an error, and no report, for what is not a
// pack it can read: not a zip, a member twice, or more than the limits.
func VerifyPackWithin(r io.ReaderAt, size int64, lim PackLimits) (PackReport, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return PackReport{}, fmt.Errorf("not a zip file: %w", err)
	}
	files, err := packMembers(zr, lim)
	if err != nil {
		return PackReport{}, err
	}
	v := &packVerifier{files: files, lim: lim, sums: map[string]string{}, approvers: map[string][]string{}}
	v.rep.Members = len(files)
	if err := v.run(); err != nil {
		return PackReport{}, err
	}
	return v.rep, nil
}

// packMembers indexes the members by name after checking what their headers claim.
func packMembers(zr *zip.Reader, lim PackLimits) (map[string]*zip.File, error) {
	if len(zr.File) > lim.Members {
		return nil, fmt.Errorf("%w: %d members, at most %d", ErrPackTooLarge, len(zr.File), lim.Members)
	}
	files := make(map[string]*zip.File, len(zr.File))
	var total uint64
	for _, f := range zr.File {
		if _, dup := files[f.Name]; dup {
			return nil, fmt.Errorf("member %s is there twice", f.Name)
		}
		// A name that leads out of the folder the pack is unpacked in (an absolute path, "..",
		// a Windows separator) is never written by an export: unpacking it could write anywhere.
		if !filepath.IsLocal(f.Name) || strings.Contains(f.Name, `\`) {
			return nil, fmt.Errorf("member %q leads out of the folder the pack is unpacked in: not a pack this program writes", f.Name)
		}
		if f.UncompressedSize64 > uint64(memberLimit(f.Name, lim)) {
			return nil, fmt.Errorf("%w: member %s claims %d bytes, at most %d", ErrPackTooLarge, f.Name, f.UncompressedSize64, memberLimit(f.Name, lim))
		}
		total += f.UncompressedSize64
		if total > uint64(lim.Total) {
			return nil, fmt.Errorf("%w: the members claim more than %d bytes together", ErrPackTooLarge, lim.Total)
		}
		files[f.Name] = f
	}
	return files, nil
}

func memberLimit(name string, lim PackLimits) int64 {
	switch {
	case name == runMember || name == sumsMember || name == approvalsMember || name == allowedMember || strings.HasPrefix(name, evidenceDir):
		return lim.Small
	case strings.HasPrefix(name, reportsDir) && strings.HasSuffix(name, ".xlsx"):
		return lim.XLSX
	}
	return lim.Member
}

// packVerifier holds what one verification found so far: every member's SHA-256 as read, and
// the payouts as the events leave them.
type packVerifier struct {
	files   map[string]*zip.File
	lim     PackLimits
	sums    map[string]string // member -> SHA-256 of its bytes as read
	read    int64             // bytes read of all members so far
	payouts map[string]*payoutReplay
	// approvers are those the reports print as having approved the run's file, with the reports
	// that print them.
	approvers map[string][]string
	// signedBy are the principals of the signatures the run went ahead on, as the pack's
	// allowed_signers lines prove them over its plan statements (never as an event's text says),
	// and of the decisions an older version kept in approvals.jsonl.
	signedBy map[string]bool
	rep      PackReport
}

func (v *packVerifier) finding(format string, args ...any) {
	v.rep.Findings = append(v.rep.Findings, fmt.Sprintf(format, args...))
}

func (v *packVerifier) run() error {
	info, err := v.readSmall(runMember)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(info, &v.rep.Info); err != nil || v.rep.Info.Format != PackFormat {
		v.finding("%s is missing or not a %s record", runMember, PackFormat)
		return nil
	}
	head, err := ledger.ParseChainHead(v.rep.Info.ChainHead)
	if err != nil {
		v.finding("%s: %v", runMember, err)
	}
	if err := v.member(eventsMember, func(r io.Reader) error { return v.checkEvents(r, head) }); err != nil {
		return err
	}
	if v.files[eventsMember] == nil {
		v.finding("%s is missing", eventsMember)
	}
	if err := v.checkReports(); err != nil {
		return err
	}
	if err := v.member(approvalsMember, v.checkApprovals); err != nil {
		return err
	}
	v.checkApprovers()
	for _, name := range v.names() {
		if _, done := v.sums[name]; !done && name != sumsMember {
			if err := v.member(name, func(r io.Reader) error { return nil }); err != nil {
				return err
			}
		}
		if strings.HasPrefix(name, inputDir) && v.sums[name] != v.rep.Info.InputSHA256 {
			v.finding("%s has SHA-256 %s, the run read %s", name, v.sums[name], v.rep.Info.InputSHA256)
		}
	}
	return v.checkSums()
}

// checkApprovals reads approvals.jsonl: every decision must be on the run's input, and every
// signature must sign its packed statement, a plan of the run's input, with a key the packed
// allowed_signers lines trusted when it was recorded; its signer is then one who approved.
func (v *packVerifier) checkApprovals(r io.Reader) error {
	approved := map[string]bool{}
	var signatures []PackedSignature
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, v.lim.Line)
	for line := 1; sc.Scan(); line++ {
		var probe struct {
			Signature *string `json:"signature"`
		}
		if err := json.Unmarshal(sc.Bytes(), &probe); err == nil && probe.Signature != nil {
			var p PackedSignature
			if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
				v.finding("%s line %d: not a signature's record: %v", approvalsMember, line, err)
				continue
			}
			signatures = append(signatures, p)
			continue
		}
		var a ledger.Approval
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			v.finding("%s line %d: not a decision: %v", approvalsMember, line, err)
			continue
		}
		if a.FileSHA256 != v.rep.Info.InputSHA256 {
			v.finding("%s line %d: a decision on SHA-256 %s, the run read %s", approvalsMember, line, a.FileSHA256, v.rep.Info.InputSHA256)
		}
		if a.Decision == ledger.ApprovalApproved {
			approved[a.Actor] = true
		}
	}
	if err := sc.Err(); err != nil {
		v.finding("%s: %v", approvalsMember, err)
	}
	for who := range approved {
		v.signed(who)
	}
	return v.checkSignatures(signatures)
}

// checkSignatures verifies each packed signature against its packed statement and the packed
// allowed_signers lines, as ssh-keygen -Y verify would.
func (v *packVerifier) checkSignatures(signatures []PackedSignature) error {
	if len(signatures) == 0 {
		return nil
	}
	lines, err := v.readSmall(allowedMember)
	if err != nil {
		return err
	}
	allowed, err := signature.ParseAllowedSigners(allowedMember, lines)
	if err != nil {
		v.finding("%s: %v", allowedMember, err)
		return nil
	}
	statements := map[string][]byte{}
	for _, p := range signatures {
		if p.Purged {
			continue // its statement was forgotten by purge: it proves no signer
		}
		if p.Statement == "" || p.Signature == "" {
			v.finding("%s: the signature of event %d comes without its statement or its signature: it proves no approval", approvalsMember, p.EventID)
			continue
		}
		statement, ok := statements[p.Statement]
		if !ok {
			if statement, err = v.readSmall(p.Statement); err != nil {
				return err
			}
			statements[p.Statement] = statement
		}
		sig, err := v.readSmall(p.Signature)
		if err != nil {
			return err
		}
		at, err := time.Parse(time.RFC3339Nano, p.At)
		if err != nil {
			v.finding("%s: event %d: its time %q is not one", approvalsMember, p.EventID, p.At)
			continue
		}
		if !bytes.Contains(statement, []byte("\nfile-sha256\t"+v.rep.Info.InputSHA256+"\n")) {
			v.finding("%s is not a plan of the run's input (SHA-256 %s)", p.Statement, v.rep.Info.InputSHA256)
			continue
		}
		id, err := signature.Verify(statement, sig, signature.NamespacePlan, allowed, at)
		if err != nil {
			v.finding("%s does not sign %s: %v", p.Signature, p.Statement, err)
			continue
		}
		v.signed(id.Principal())
	}
	return nil
}

func (v *packVerifier) signed(principal string) {
	if v.signedBy == nil {
		v.signedBy = map[string]bool{}
	}
	v.signedBy[principal] = true
}

// checkApprovers holds every name a report prints as having approved the run against the
// signatures the run's events record.
func (v *packVerifier) checkApprovers() {
	whos := make([]string, 0, len(v.approvers))
	for who := range v.approvers {
		whos = append(whos, who)
	}
	sort.Strings(whos)
	for _, who := range whos {
		for _, name := range strings.Split(who, ", ") {
			if !v.signedBy[name] {
				v.finding("%s print(s) the run as approved by %s: no signature in the pack, nor decision in %s, proves %s approved it",
					strings.Join(v.approvers[who], ", "), who, approvalsMember, name)
			}
		}
	}
}

func (v *packVerifier) names() []string {
	names := make([]string, 0, len(v.files))
	for n := range v.files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// member streams one member through fn, hashing what fn reads and the rest fn leaves, and
// stops at the member's limit whatever its header claimed. A missing member is no call.
func (v *packVerifier) member(name string, fn func(io.Reader) error) error {
	f := v.files[name]
	if f == nil {
		return nil
	}
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("member %s: %w", name, err)
	}
	defer rc.Close()
	limit := min(memberLimit(name, v.lim), v.lim.Total-v.read)
	lr := &io.LimitedReader{R: rc, N: limit + 1}
	h := sha256.New()
	tee := io.TeeReader(lr, h)
	if err := fn(tee); err != nil {
		return fmt.Errorf("member %s: %w", name, err)
	}
	if _, err := io.Copy(io.Discard, tee); err != nil {
		return fmt.Errorf("member %s: %w", name, err)
	}
	if lr.N <= 0 {
		return fmt.Errorf("%w: member %s holds more than %d bytes (its header claimed %d)", ErrPackTooLarge, name, limit, f.UncompressedSize64)
	}
	v.read += limit + 1 - lr.N
	v.sums[name] = hexSum(h)
	return nil
}

// readSmall reads a member that is read whole (run.json, SHA256SUMS); nil when it is missing.
func (v *packVerifier) readSmall(name string) ([]byte, error) {
	var data []byte
	err := v.member(name, func(r io.Reader) error {
		var err error
		data, err = io.ReadAll(r)
		return err
	})
	return data, err
}

func hexSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

// checkSums compares every member's SHA-256 as read with SHA256SUMS.
func (v *packVerifier) checkSums() error {
	data, err := v.readSmall(sumsMember)
	if err != nil {
		return err
	}
	listed := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(nil, int(v.lim.Small)+1)
	for sc.Scan() {
		if sum, name, ok := strings.Cut(sc.Text(), "  "); ok {
			listed[name] = sum
		}
	}
	if len(listed) == 0 {
		v.finding("%s is missing or empty", sumsMember)
		return nil
	}
	names := v.names()
	for n := range listed {
		if v.files[n] == nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		want, ok := listed[n]
		switch {
		case n == sumsMember:
		case v.files[n] == nil:
			v.finding("%s is listed in %s but missing", n, sumsMember)
		case !ok:
			v.finding("%s is not listed in %s (added)", n, sumsMember)
		case v.sums[n] != want:
			v.finding("%s does not match its SHA-256 in %s (changed)", n, sumsMember)
		}
	}
	return nil
}
