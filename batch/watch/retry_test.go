package watch_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/batch/watch"
)

// A rejected file's note names its retry file, written beside the reports; corrected and dropped
// into the inbox, it pays every row once, and dropped again it pays nothing more.
func TestWatchNoteNamesTheRetryFile(t *testing.T) {
	t.Parallel()
	rig := newWatchRig(t, batchtest.NewHarness(t, sandbox.Options{}), 0, nil)
	rows := batchtest.Payroll(4, "WR")
	rows[2].Amount = "12.345"
	watchPut(t, rig.path(watch.InboxDir, "payroll.csv"), watchCSV(rows))
	if worst, err := rig.w.Once(context.Background()); err != nil || worst != exitcode.Rejected {
		t.Fatalf("once: exit %d, %v; want 3", worst, err)
	}
	out := rig.results()[0]
	retry := out.Result.RetryFile
	if retry == "" || filepath.Dir(retry) != filepath.Join(rig.root, watch.ReportsDir) {
		t.Fatalf("retry file %q, want one in the reports folder", retry)
	}
	why := batchtest.ReadFile(t, rig.path(watch.FailedDir, "payroll.csv.why.txt"))
	if !strings.Contains(why, "Retry file: "+retry) {
		t.Fatalf("the note does not name the retry file %s:\n%s", retry, why)
	}
	data, err := os.ReadFile(retry)
	if err != nil {
		t.Fatal(err)
	}
	fixed := strings.Replace(string(data), "12.345", "12.34", 1)
	for round := 1; round <= 2; round++ {
		watchPut(t, rig.path(watch.InboxDir, "payroll-retry.csv"), []byte(fixed))
		if worst, err := rig.w.Once(context.Background()); err != nil || worst != exitcode.OK {
			t.Fatalf("retry %d: exit %d, %v; logs:\n%s", round, worst, err, rig.logs)
		}
	}
	rig.assertCreatedOnce(rows)
}
