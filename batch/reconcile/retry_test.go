package reconcile_test

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/reconcile"
	"github.com/payout/payout/ledger"
)

// A payout the service fails after accepting it is unpaid: the reconciliation that finds it
// writes the run's retry file again, offering it under a new reference, and a later one finds
// nothing more to write for that run.
func TestReconcileWritesTheRetryFileOfAFailedLaterRow(t *testing.T) {
	t.Parallel()
	b := newReconBench(t, sandbox.Faults{})
	run := b.pay("payroll.csv", [][3]string{{"FL-1", "0123456781", "100.00"}, {"FL-2", "0123456000", "200.00"}}, nil)
	if run.ExitCode != exitcode.OK || run.RetryFile != "" {
		t.Fatalf("run: exit %d, retry file %q; want 0 and none (every row is pending)", run.ExitCode, run.RetryFile)
	}
	b.settle()
	dir := filepath.Join(b.dir, "recon")
	res := b.reconcile(reconcile.Options{ReportDir: dir})
	if res.Failed != 1 || len(res.RetryFiles) != 1 {
		t.Fatalf("reconcile: failed %d, retry files %q; want 1 and 1", res.Failed, res.RetryFiles)
	}
	path := res.RetryFiles[0]
	if !strings.HasPrefix(filepath.Base(path), "payroll."+run.RunID+".reconciled-") || !strings.HasSuffix(path, ".retry.csv") ||
		filepath.Dir(path) != dir {
		t.Fatalf("retry file %q", path)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[1][0] != "FL-2-R1" || !strings.HasPrefix(recs[1][len(recs[1])-1], "failed: ") {
		t.Fatalf("retry file %q, want FL-2 under FL-2-R1, failed", recs)
	}
	if again := b.reconcile(reconcile.Options{ReportDir: dir}); len(again.RetryFiles) != 0 {
		t.Errorf("a reconciliation that changed nothing wrote %q", again.RetryFiles)
	}
}

// A payout a callback made FAILED is in the retry file the next reconciliation writes, even when
// that reconciliation itself changed nothing.
func TestReconcileWritesTheRetryFileOfACallbackFailure(t *testing.T) {
	t.Parallel()
	b := newReconBench(t, sandbox.Faults{})
	run := b.pay("vendors.csv", [][3]string{{"CB-1", "0123456781", "100.00"}, {"CB-2", "0123456782", "200.00"}}, nil)
	if run.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d", run.ExitCode)
	}
	p, err := b.db.Get(context.Background(), "CB-2")
	if err != nil {
		t.Fatal(err)
	}
	// What the callback receiver records for a payout the service reports FAILED.
	if err := b.db.Apply(context.Background(), ledger.Change{Ref: "CB-2", From: ledger.Submitted, To: ledger.Failed,
		InvoiceNo: p.InvoiceNo, Error: "the service reports FAILED", Detail: "callback: FAILED"}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(b.dir, "recon")
	res := b.reconcile(reconcile.Options{ReportDir: dir})
	if len(res.RetryFiles) != 1 || !strings.Contains(filepath.Base(res.RetryFiles[0]), run.RunID) {
		t.Fatalf("retry files %q, want the one of run %s", res.RetryFiles, run.RunID)
	}
	data, err := os.ReadFile(res.RetryFiles[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\nCB-2-R1,") || strings.Contains(string(data), "CB-1") {
		t.Errorf("retry file:\n%s\nwant CB-2 under CB-2-R1, and not CB-1", data)
	}
}
