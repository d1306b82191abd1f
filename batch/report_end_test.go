package batch_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/batch/runs"
)

func reportWithSuffix(tb testing.TB, paths []string, suffix string) string {
	tb.Helper()
	for _, p := range paths {
		if strings.HasSuffix(p, suffix) {
			return p
		}
	}
	tb.Fatalf("no %s among %v", suffix, paths)
	return ""
}

func TestRunAbortedReportSaysSoAndRegeneratesApart(t *testing.T) {
	t.Parallel()
	h := batchtest.NewHarness(t, sandbox.Options{})
	rows := batchtest.Payroll(80, "ABORT")
	path := batchtest.WritePayroll(t, h.Dir, "abort.csv", rows)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res := h.Run(ctx, path, func(c *batch.Config) {
		c.Workers = 2 // few rows in flight, so that the cancel stops it with most still to send
		c.Progress = func(done, total int) {
			if done >= 20 {
				cancel()
			}
		}
	})
	if res.ExitCode != exitcode.Aborted || res.Aborted == "" || res.NotSent == 0 {
		t.Fatalf("result %+v, want a run aborted with rows not sent", res)
	}
	page := batchtest.ReadFile(t, reportWithSuffix(t, res.Reports, ".report.html"))
	for _, want := range []string{"ABORTED: " + res.Aborted, "run the same command again to resume",
		"row(s) were not sent (state READY): line "} {
		if !strings.Contains(page, want) {
			t.Errorf("the aborted run's HTML report lacks %q", want)
		}
	}

	// `payout report` later: new files beside the run's own, which stay as the run left them.
	own := map[string][]byte{}
	for _, p := range res.Reports {
		own[p] = []byte(batchtest.ReadFile(t, p))
	}
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	again, err := runs.WriteReports(context.Background(), h.DB, res.RunID, h.Cfg.ReportDir, "", now, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := "abort." + res.RunID + ".regenerated-20261124T100000Z.result.csv"; filepath.Base(again.CSV) != want {
		t.Errorf("regenerated CSV %s, want %s", again.CSV, want)
	}
	for p, data := range own {
		if got := batchtest.ReadFile(t, p); !bytes.Equal([]byte(got), data) {
			t.Errorf("payout report overwrote the run's own %s", p)
		}
	}
	regenerated := batchtest.ReadFile(t, again.HTML)
	for _, want := range []string{"Regenerated at 2026-11-24 10:00:00 &#43;00:00 from the ledger", "ABORTED: "} {
		if !strings.Contains(regenerated, want) {
			t.Errorf("regenerated HTML lacks %q", want)
		}
	}
}

func TestRunReportFailureStillClosesTheRun(t *testing.T) {
	t.Parallel()
	h := batchtest.NewHarness(t, sandbox.Options{})
	rows := batchtest.Payroll(3, "NOREPORT")
	path := batchtest.WritePayroll(t, h.Dir, "noreport.csv", rows)
	cfg := h.Cfg
	cfg.ReportDir = filepath.Join(h.Dir, "a-file")
	if err := os.WriteFile(cfg.ReportDir, nil, 0o600); err != nil { // reports cannot go under a file
		t.Fatal(err)
	}
	res, err := batch.NewRunner(cfg).Run(context.Background(), path)
	if !errors.Is(err, batch.ErrReportsNotWritten) || !strings.Contains(err.Error(), "payout report "+res.RunID) || res.Rows != len(rows) {
		t.Fatalf("run error %v, want one that says the reports failed and how to write them", err)
	}
	run, err := h.DB.GetRun(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != "finished" || run.ExitCode != exitcode.OK || run.EndedAt.IsZero() {
		t.Errorf("run %+v, want it finished with exit 0: every row was paid, only the reports failed", run)
	}
	// Its reports can be written from the ledger afterwards.
	if _, err := runs.WriteReports(context.Background(), h.DB, res.RunID, t.TempDir(), "", time.Now(), nil, ""); err != nil {
		t.Errorf("payout report after the failure: %v", err)
	}
}
