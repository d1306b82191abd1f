package main_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestCommandStatusCountsRejectedRows(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	input := "external_invoice_ref,recipient_reference,bank,third_party_account_no,amount,payment_description\n" +
		"REJ-1,Ali,Maybank,000181590832,100.00,Gaji\n" +
		"REJ-2,Abu,Maybank,000181590833,12.345,Gaji\n" +
		"REJ-3,Chong,Bank of Atlantis,000181590834,30.00,Gaji\n"
	if err := os.WriteFile(filepath.Join(u.dir, "bad.csv"), []byte(input), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the same file twice: its rows count once
		if out, errOut, code := u.run("run", "bad.csv"); code != 3 {
			t.Fatalf("run exit %d, want 3: %s %s", code, out, errOut)
		}
	}
	out, errOut, code := u.run("status")
	if code != 0 {
		t.Fatalf("status exit %d: %s %s", code, out, errOut)
	}
	if !regexp.MustCompile(`(?m)^\s*REJECTED\s+2\s+42\.35\s*$`).MatchString(out) {
		t.Errorf("status does not count the 2 rejected rows (12.345 + 30.00):\n%s", out)
	}
	if !strings.Contains(out, "validation refused") {
		t.Errorf("status does not say what REJECTED counts:\n%s", out)
	}
}

func TestCommandReportWritesNewFilesBesideTheRunsOwn(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	if out, errOut, code := u.run("run", samplePath(t)); code != 0 {
		t.Fatalf("run exit %d: %s %s", code, out, errOut)
	}
	dir := filepath.Join(u.dir, "reports")
	own, err := filepath.Glob(filepath.Join(dir, "sample-payroll.*"))
	if err != nil || len(own) != 3 {
		t.Fatalf("the run's reports %v (%v), want 3", own, err)
	}
	before := map[string][]byte{}
	for _, p := range own {
		before[p], _ = os.ReadFile(p)
	}
	runID := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(own[0]), "sample-payroll."), ".report.html")
	runID = strings.TrimSuffix(runID, ".result.csv")
	out, errOut, code := u.run("report", runID)
	if code != 0 {
		t.Fatalf("report exit %d: %s %s", code, out, errOut)
	}
	printed := strings.Fields(out)
	if len(printed) != 3 {
		t.Fatalf("report printed %q, want three paths", out)
	}
	for _, p := range printed {
		if !regexp.MustCompile(`^sample-payroll\.` + regexp.QuoteMeta(runID) + `\.regenerated-\d{8}T\d{6}Z\.(result\.csv|result\.xlsx|report\.html)$`).MatchString(filepath.Base(p)) {
			t.Errorf("regenerated report named %s", p)
		}
	}
	for p, data := range before {
		if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, data) {
			t.Errorf("payout report changed the run's own %s (%v)", p, err)
		}
	}
}

// TestCommandReportOfAWatchedFileKeepsItsInboxName: a second november.csv dropped into a watched
// folder is claimed under a timestamped name; `payout report` names its regenerated reports
// november.<run id>..., as the watch named the run's own, not after the timestamped name.
func TestCommandReportOfAWatchedFileKeepsItsInboxName(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	dir := filepath.Join(u.dir, "payroll")
	if err := os.MkdirAll(filepath.Join(dir, "inbox"), 0o750); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		copyFile(t, samplePath(t), filepath.Join(dir, "inbox", "november.csv"))
		if _, errOut, code := u.run("watch", "--once", "--settle", "0", dir); code != 0 {
			t.Fatalf("watch --once exit %d: %s", code, errOut)
		}
	}
	if stamped, _ := filepath.Glob(filepath.Join(dir, "done", "november.*.csv")); len(stamped) != 1 {
		t.Fatalf("done holds %v, want the second november.csv under a timestamped name", stamped)
	}
	own, _ := filepath.Glob(filepath.Join(dir, "reports", "november.*.result.csv"))
	if len(own) != 2 {
		t.Fatalf("the runs' reports %v, want two", own)
	}
	for _, p := range own {
		runID := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "november."), ".result.csv")
		out, errOut, code := u.run("report", "--report-dir", t.TempDir(), runID)
		if code != 0 {
			t.Fatalf("report exit %d: %s %s", code, out, errOut)
		}
		for _, p := range strings.Fields(out) {
			if !strings.HasPrefix(filepath.Base(p), "november."+runID+".regenerated-") {
				t.Errorf("regenerated report of run %s named %s, want november.%s.regenerated-...", runID, filepath.Base(p), runID)
			}
		}
	}
}
