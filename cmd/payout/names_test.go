package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The demo's bank holds another name for one sample row: its signed callback flags the payout,
// whose state stays SUCCEEDED, and the flag shows in the demo's summary, `payout status REF`,
// `payout status`, the reconciliation report and the next run's metrics.
func TestNameMismatchShownEverywhere(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	sb := newSandbox(t)
	u := newUserWithoutLedger(t, sb)
	work := filepath.Join(u.dir, "work")
	out, errOut, code := u.run("demo", "--keep", work, "--report-dir", "reports")
	if code != 0 {
		t.Fatalf("demo exit %d: %s %s", code, out, errOut)
	}
	if !strings.Contains(out, "name check: 1 payout went to an account whose bank holds another name than the recipient") ||
		!strings.Contains(out, `PAY-2026-11-004: recipient "Lim Mei Ling", the bank holds "TAN WEI JIE"`) {
		t.Errorf("the demo's summary does not show the one name mismatch:\n%s", out)
	}
	ledgerFile := filepath.Join(work, "demo-ledger.db")

	out, errOut, code = u.run("status", "--ledger", ledgerFile, "PAY-2026-11-004")
	if code != 0 {
		t.Fatalf("status REF exit %d: %s %s", code, out, errOut)
	}
	for _, want := range []string{`(?m)^state:\s+SUCCEEDED$`, `(?m)^name at the bank:\s+TAN WEI JIE$`, `(?m)^name check:\s+MISMATCH: `,
		`SUBMITTED -> SUCCEEDED .*the bank's name for the account differs from the recipient`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("status PAY-2026-11-004 does not match %s:\n%s", want, out)
		}
	}
	out, _, _ = u.run("status", "--ledger", ledgerFile, "PAY-2026-11-005")
	if !regexp.MustCompile(`(?m)^name at the bank:\s+MUTHU KRISHNAN\n^name check:\s+match$`).MatchString(out) {
		t.Errorf("status of a name the bank shortens:\n%s", out)
	}

	out, errOut, code = u.run("status", "--ledger", ledgerFile)
	if code != 0 || !strings.Contains(out, "name mismatches: 1 payout went to an account whose bank holds another name than the recipient: PAY-2026-11-004") {
		t.Errorf("status exit %d does not count the name mismatch: %s %s", code, out, errOut)
	}

	recons, err := filepath.Glob(filepath.Join(u.dir, "reports", "reconcile.*.csv"))
	if err != nil || len(recons) != 1 {
		t.Fatalf("reconciliation reports %v, %v", recons, err)
	}
	csv, err := os.ReadFile(recons[0])
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(csv), ",mismatch\n"); n != 1 || !strings.Contains(string(csv), ",TAN WEI JIE,mismatch\n") {
		t.Errorf("the reconciliation report flags %d name mismatches, want PAY-2026-11-004's:\n%s", n, csv)
	}

	// Paying the same file again skips every row; its metrics count the ledger's name mismatches.
	out, errOut, code = u.run("run", "--ledger", ledgerFile, "--metrics-file", "payout.prom", filepath.Join(work, "sample-payroll.csv"))
	if code != 0 {
		t.Fatalf("second run exit %d: %s %s", code, out, errOut)
	}
	prom, err := os.ReadFile(filepath.Join(u.dir, "payout.prom"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(prom), "\npayout_ledger_name_mismatches 1\n") {
		t.Errorf("metrics lack payout_ledger_name_mismatches 1:\n%s", prom)
	}
}
