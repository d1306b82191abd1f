package batch_test

import (
	"context"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/batch/pool"
)

// runLogged pays rows at limit per second with workers workers (0: sized by the pool) against a
// sandbox answering in latency, and returns its logs.
func runLogged(t *testing.T, rows int, limit rate.Limit, workers int, latency time.Duration) (*batchtest.Harness, string) {
	t.Helper()
	h := batchtest.BuildHarness(t, sandbox.Options{Faults: sandbox.Faults{Latency: latency}}, rate.NewLimiter(limit, 1), workers)
	payroll := batchtest.Payroll(rows, "POOL")
	var logs batchtest.LogBuffer
	res := h.Run(context.Background(), batchtest.WritePayroll(t, h.Dir, "pool.csv", payroll), func(c *batch.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	if res.ExitCode != batch.ExitOK {
		t.Fatalf("run %+v", res)
	}
	h.AssertExactlyOnce(payroll, res)
	return h, logs.String()
}

// TestPoolSizesItselfToTheRate: at --rate 40 against a service answering in 150 ms, 6 requests
// must be in flight to keep the rate, more than the 4 workers a pool starts with. Left to size
// itself, the pool grows, says so, and the service sees more than 4 requests at once.
func TestPoolSizesItselfToTheRate(t *testing.T) {
	h, logs := runLogged(t, 60, 40, 0, 150*time.Millisecond)
	m := regexp.MustCompile(`the pool grew to (\d+) for --rate 40/s`).FindStringSubmatch(logs)
	if m == nil {
		t.Fatalf("the run does not say how many workers it grew to:\n%s", logs)
	}
	// 40/s × at least 150 ms × 1.25, rounded up, and one spare.
	if n, _ := strconv.Atoi(m[1]); n < 9 || n > pool.AutoMaxWorkers {
		t.Errorf("grew to %d workers, want 9 to %d", n, pool.AutoMaxWorkers)
	}
	if got := h.Sandbox.Stats().MaxInFlight; got <= pool.AutoStartWorkers {
		t.Errorf("at most %d requests in flight at once: the pool did not grow past %d", got, pool.AutoStartWorkers)
	}
	if strings.Contains(logs, "raise --workers") {
		t.Errorf("a pool that sizes itself was told to raise --workers:\n%s", logs)
	}
}

// TestTooFewWorkersSaidOnce: an explicit --workers 2 at --rate 40 against a service answering in
// 100 ms can send 20/s at most: the run says so once, and keeps its 2 workers.
func TestTooFewWorkersSaidOnce(t *testing.T) {
	h, logs := runLogged(t, 30, 40, 2, 100*time.Millisecond)
	if n := strings.Count(logs, "raise --workers"); n != 1 {
		t.Fatalf("told %d times to raise --workers, want once:\n%s", n, logs)
	}
	want := regexp.MustCompile(`level=WARN msg="2 workers can send at most \d+(\.\d)?/s at the service's observed latency of \d+ ms; --rate is 40/s: raise --workers to \d+ or leave it unset"`)
	if !want.MatchString(logs) {
		t.Errorf("the warning does not say what limits the rate and what to do:\n%s", logs)
	}
	if got := h.Sandbox.Stats().MaxInFlight; got > 2 {
		t.Errorf("%d requests in flight at once with --workers 2", got)
	}
	if strings.Contains(logs, "the pool grew") {
		t.Errorf("an explicit number of workers grew:\n%s", logs)
	}
}

// TestExplicitWorkersAtRateInfSaidNothing: with no rate limit there is no rate to fall short of.
func TestExplicitWorkersAtRateInfSaidNothing(t *testing.T) {
	_, logs := runLogged(t, 30, rate.Inf, 2, 20*time.Millisecond)
	if strings.Contains(logs, "raise --workers") {
		t.Errorf("warned at rate inf:\n%s", logs)
	}
}
