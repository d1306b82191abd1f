package reconcile_test

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/reconcile"
)

// A payout the service fails after accepting it is unpaid: the reconciliation that finds it
// writes the run's retry file again, offering it under a new reference, and a later one finds
// nothing more to write for that run.
func TestReconcileWritesTheRetryFileOfAFailedLaterRow(t *testing.T) {
	b := newReconBench(t, sandbox.Faults{})
	run := b.pay("payroll.csv", [][3]string{{"FL-1", "0123456781", "100.00"}, {"FL-2", "0123456000", "200.00"}}, nil)
	if run.ExitCode != batch.ExitOK || run.RetryFile != "" {
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
