package batch_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/internal/batchtest"
)

// TestRunSaysWhatItWaitsFor: a rerun whose unknown outcomes are not found has nothing to do but
// wait out their grace; it says so at warning level (cron sees it), and tells the progress bar.
func TestRunSaysWhatItWaitsFor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := batchtest.NewHarness(t, sandbox.Options{})
	if res := h.Run(ctx, batchtest.WritePayroll(t, h.Dir, "known.csv", batchtest.Payroll(2, "KNOWN")), nil); res.ExitCode != exitcode.OK {
		t.Fatalf("setup run %+v", res)
	}
	rows := batchtest.Payroll(5, "WAIT")
	path := batchtest.WritePayroll(t, h.Dir, "wait.csv", rows)
	if res := h.Run(ctx, path, batchtest.FailAfterProviders(h, sandbox.Faults{ErrorRate: 1})); res.Unknown != len(rows) {
		t.Fatalf("result %+v, want every row unknown", res)
	}
	h.Sandbox.SetFaults(sandbox.Faults{})

	var logs batchtest.LogBuffer
	var mu sync.Mutex
	var told []int
	var until time.Time
	// The grace is a minute of a fake clock that stands still until the run says it waits, so
	// that it says so, and then moves to each wait's end: no wait of the run is real.
	clock := batchtest.NewClock(time.Now())
	stop := func() {}
	res := h.Run(ctx, path, func(c *batch.Config) {
		c.Clock = clock
		c.UnknownGrace = time.Minute
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
		c.Waiting = func(n int, u time.Time) {
			mu.Lock()
			defer mu.Unlock()
			told = append(told, n)
			if n > 0 {
				until = u
				if len(told) == 1 {
					stop = clock.Drive()
				}
			}
		}
	})
	mu.Lock()
	stop()
	mu.Unlock()
	if res.ExitCode != exitcode.OK {
		t.Fatalf("rerun %+v, want exit 0", res)
	}
	h.AssertExactlyOnce(rows, res)
	out := logs.String()
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "waiting for the unknown-outcome grace: 5 payouts") || !strings.Contains(out, "payouts=5") {
		t.Errorf("logs do not say what the run waits for:\n%s", out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(told) < 2 || told[0] != 5 || told[len(told)-1] != 0 || until.IsZero() {
		t.Errorf("Waiting was told %v (until %v), want 5 payouts, then 0 once the run works again", told, until)
	}
	if until.Before(res.StartedAt.Add(time.Minute)) {
		t.Errorf("Waiting was told the grace ends at %v, want a minute of the run's clock after it started at %v", until, res.StartedAt)
	}
}
