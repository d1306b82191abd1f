package main_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/internal/fakeclock"
)

// settledRun pays the sample file while the service keeps every payout PENDING, then lets them
// settle and reconciles: the reconciliation's events are what make them SUCCEEDED. It returns the
// run's and the reconciliation's ids.
func settledRun(t *testing.T) (*user, string, string) {
	t.Helper()
	clock := fakeclock.New(time.Now())
	sb := sandbox.New(sandbox.Options{AuthToken: "e2e-token", HashKey: []byte("e2e-hash-key"), Now: clock.Now,
		SettleAfter: time.Hour, SettleInterval: -1})
	t.Cleanup(sb.Close)
	u := newUser(t, sb)
	runID, _ := paidRun(t, u, samplePath(t))
	clock.Advance(2 * time.Hour)
	out, errOut, code := u.run("reconcile", "--json")
	if code != 0 {
		t.Fatalf("reconcile exit %d: %s %s", code, out, errOut)
	}
	var rec struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(out), &rec); err != nil || rec.RunID == "" {
		t.Fatalf("reconcile --json: %v: %s", err, out)
	}
	return u, runID, rec.RunID
}

// exportPack writes a run's pack and checks that verify finds it intact and says it is unsigned.
func exportPack(t *testing.T, u *user, runID, name string) (string, map[string][]byte) {
	t.Helper()
	pack := filepath.Join(u.dir, name)
	before := time.Now()
	if _, _, code := u.run("audit", "export", "--run", runID, "--out", pack, "--with-input"); code != 0 {
		if out, errOut, code := u.run("audit", "export", "--run", runID, "--out", pack); code != 0 {
			t.Fatalf("export of %s: exit %d: %s %s", runID, code, out, errOut)
		}
	}
	checkMemberTimes(t, pack, before, time.Now())
	out, errOut, code := u.run("audit", "verify", "--pack", pack)
	if code != 0 || !strings.Contains(out, "intact: pack of run "+runID) || !strings.Contains(out, "unsigned") {
		t.Fatalf("verify of the pack of %s as written: exit %d: %s %s", runID, code, out, errOut)
	}
	return pack, readZip(t, pack)
}

// checkMemberTimes fails when a member of the pack is not dated within the export (a zip's
// times are to the second, rounded either way).
func checkMemberTimes(t *testing.T, pack string, from, to time.Time) {
	t.Helper()
	zr, err := zip.OpenReader(pack)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.Modified.Before(from.Add(-2*time.Second)) || f.Modified.After(to.Add(2*time.Second)) {
			t.Errorf("pack member %s is dated %s, want the export's time (%s to %s)", f.Name, f.Modified, from, to)
		}
	}
}

// eventsOf returns a pack's events.jsonl as objects.
func eventsOf(t *testing.T, members map[string][]byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(members["events.jsonl"])), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func TestAuditPackHoldsTheEventsThatSettledItsPayouts(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	u, runID, recID := settledRun(t)
	// A signature left from an earlier pack of that name signs other bytes: exporting removes it.
	stale := filepath.Join(u.dir, "run.zip.sig")
	if err := os.WriteFile(stale, []byte("-----BEGIN SSH SIGNATURE-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, members := exportPack(t, u, runID, "run.zip")
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the signature of an earlier pack is left beside the new one: %v", err)
	}
	byRecon := 0
	for _, e := range eventsOf(t, members) {
		if e["run_id"] == recID && e["to_state"] == "SUCCEEDED" {
			byRecon++
		}
	}
	if byRecon != 50 {
		t.Errorf("the run's pack holds %d reconcile events that settled its 50 payouts", byRecon)
	}
	// The reconciliation's own pack holds its payouts' history from the events that recorded them.
	_, members = exportPack(t, u, recID, "recon.zip")
	recorded := 0
	for _, e := range eventsOf(t, members) {
		if e["from_state"] == "" && e["run_id"] == runID {
			recorded++
		}
	}
	if recorded != 50 {
		t.Errorf("the reconciliation's pack holds %d events that recorded its 50 payouts", recorded)
	}
}

// forge returns a copy of members with one member changed by edit, which must change it.
func forge(t *testing.T, members map[string][]byte, match string, edit func([]byte) []byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	changed := ""
	for name, data := range members {
		out[name] = data
		if changed == "" && regexp.MustCompile(match).MatchString(name) {
			out[name] = edit(data)
			if bytes.Equal(out[name], data) {
				t.Fatalf("the edit left %s as it was", name)
			}
			changed = name
		}
	}
	if changed == "" {
		t.Fatalf("no member matches %s", match)
	}
	return out
}

func replaceOnce(old, new string) func([]byte) []byte {
	return func(b []byte) []byte { return []byte(strings.Replace(string(b), old, new, 1)) }
}

// replaceAfter replaces the first old after mark.
func replaceAfter(mark, old, new string) func([]byte) []byte {
	return func(b []byte) []byte {
		before, after, _ := strings.Cut(string(b), mark)
		return []byte(before + mark + strings.Replace(after, old, new, 1))
	}
}

// setXLSXCell changes one cell of a workbook.
func setXLSXCell(t *testing.T, sheet, cell, value string) func([]byte) []byte {
	return func(b []byte) []byte {
		f, err := excelize.OpenReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.SetCellStr(sheet, cell, value); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := f.Write(&out); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
}

// dropEvent takes the last event whose line matches out of events.jsonl.
func dropEvent(match string) func([]byte) []byte {
	return func(b []byte) []byte {
		lines := strings.SplitAfter(string(b), "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			if regexp.MustCompile(match).MatchString(lines[i]) {
				return []byte(strings.Join(append(lines[:i:i], lines[i+1:]...), ""))
			}
		}
		return b
	}
}

func TestAuditPackRefusesForgeriesWhoseSumsWereWrittenAgain(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	u, runID, _ := settledRun(t)
	_, members := exportPack(t, u, runID, "run.zip")
	zeros := strings.Repeat("0", 64)
	for _, tc := range []struct {
		name, member string
		edit         func([]byte) []byte
		want         string
	}{
		{"an amount in the CSV", `\.result\.csv$`, replaceOnce(",6347.10,", ",63471.00,"),
			`result\.csv line 2: payout PAY-2026-11-001: amount "63471.00", its events say "6347.10"`},
		{"an account in the CSV", `\.result\.csv$`, replaceOnce(",000181590832,", ",999181590832,"),
			`result\.csv line 2: payout PAY-2026-11-001: name or account number does not match the digest recorded by event \d+`},
		{"a state in the HTML", `\.report\.html$`, replaceAfter(">PAY-2026-11-001<", `s-ok">SUCCEEDED<`, `s-failed">FAILED<`),
			`report\.html table row 1: payout PAY-2026-11-001: state "FAILED", its events say "SUCCEEDED"`},
		{"a name in the XLSX", `\.result\.xlsx$`, setXLSXCell(t, "Rows", "C2", "Mallory"),
			`result\.xlsx sheet Rows row 2: payout PAY-2026-11-001: name or account number does not match`},
		{"the total in the HTML", `\.report\.html$`, func(b []byte) []byte {
			return regexp.MustCompile(`id="total-amount">RM [0-9,.]+<`).ReplaceAll(b, []byte(`id="total-amount">RM 1.00<`))
		}, `report\.html states Total: 50 rows, RM 1\.00; its rows add up to 50 rows, \d+\.\d\d`},
		{"the input's digest in run.json", `^run\.json$`, func(b []byte) []byte {
			return regexp.MustCompile(`"input_sha256": "[0-9a-f]+"`).ReplaceAll(b, []byte(`"input_sha256": "`+zeros+`"`))
		}, `prints the input's SHA-256 [0-9a-f]{64}, run\.json says ` + zeros},
		{"an approval", `^approvals\.jsonl$`, func(b []byte) []byte {
			return append(b, `{"FileSHA256":"`+zeros+`","Decision":"approved","Actor":"mallory@host"}`+"\n"...)
		}, `approvals\.jsonl line 1: a decision on SHA-256 ` + zeros},
		{"the reconcile event that settled a payout", `^events\.jsonl$`, dropEvent(`"ref":"PAY-2026-11-050".*"to_state":"SUCCEEDED"`),
			`payout PAY-2026-11-050: state "SUCCEEDED", its events say "SUBMITTED"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forged := filepath.Join(u.dir, "forged.zip")
			writeZipWithSums(t, forged, forge(t, members, tc.member, tc.edit))
			out, errOut, code := u.run("audit", "verify", "--pack", forged)
			if code != 4 || !regexp.MustCompile(tc.want).MatchString(out) {
				t.Errorf("verify of a pack with %s changed and SHA256SUMS written again: exit %d, want 4 and %s:\n%s%s", tc.name, code, tc.want, out, errOut)
			}
		})
	}
}

func TestAuditPackNamesARowTakenOutOfEveryReport(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	u, runID, _ := settledRun(t)
	_, members := exportPack(t, u, runID, "run.zip")
	drop := regexp.MustCompile(`(?m)^51,PAY-2026-11-050,.*\n`)
	forged := map[string][]byte{}
	for name, data := range members {
		switch {
		case strings.HasSuffix(name, ".result.csv"):
			forged[name] = drop.ReplaceAll(data, nil)
		case strings.HasPrefix(name, "reports/"): // the XLSX and HTML reports, left out of the pack
		default:
			forged[name] = data
		}
	}
	path := filepath.Join(u.dir, "forged.zip")
	writeZipWithSums(t, path, forged)
	out, errOut, code := u.run("audit", "verify", "--pack", path)
	if code != 4 || !regexp.MustCompile(`payout PAY-2026-11-050: its events say run \S+ recorded it, no report row shows it`).MatchString(out) {
		t.Errorf("verify of a pack whose reports lack a row the run recorded: exit %d: %s %s", code, out, errOut)
	}
}

func TestAuditVerifyRefusesAPackBomb(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	// Four members that claim 1 GiB each, in a pack of a few kilobytes.
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"run.json", "events.jsonl", "reports/a.report.html", "SHA256SUMS"} {
		w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Store, UncompressedSize64: 1 << 30, CompressedSize64: 4})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("{}\n\n"))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	pack := filepath.Join(u.dir, "bomb.zip")
	if err := os.WriteFile(pack, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := u.runWithin(time.Minute, "audit", "verify", "--pack", pack)
	if code != 4 || !strings.Contains(errOut, "the pack is larger than a verifier reads") {
		t.Errorf("verify of a pack bomb: exit %d: %s %s", code, out, errOut)
	}
}
