package pool_test

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/batch/pool"
)

// waves stands in for a service that answers in a time of the fake clock: each task's handler
// blocks until the test has seen every task of its wave start, moved the clock on by the
// latency, and let the wave go. The pool, which times its tasks on the clock, sees them take the
// latency exactly, and the test counts how many were in flight at once without a real wait.
type waves struct {
	clock   *batchtest.Clock
	latency time.Duration

	mu      sync.Mutex
	started int           // tasks of the current wave in flight
	most    int           // the most tasks in flight at once
	gate    chan struct{} // closed to let the current wave go
	free    bool          // no wave any more: tasks answer at once
	arrived chan struct{} // signalled whenever a task starts
}

func newWaves(clock *batchtest.Clock, latency time.Duration) *waves {
	return &waves{clock: clock, latency: latency, gate: make(chan struct{}), arrived: make(chan struct{}, 1)}
}

func (w *waves) handle(_ context.Context, j job) pool.Result[job] {
	w.mu.Lock()
	if w.free {
		w.mu.Unlock()
		return done(j)
	}
	w.started++
	w.most = max(w.most, w.started)
	gate := w.gate
	w.mu.Unlock()
	select {
	case w.arrived <- struct{}{}:
	default:
	}
	<-gate
	return done(j)
}

// next waits until n tasks of the wave are in flight, then moves the clock on by the latency and
// lets them go. A wave that never fills fails the test instead of hanging it.
func (w *waves) next(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		w.mu.Lock()
		started := w.started
		w.mu.Unlock()
		if started == n {
			break
		}
		if started > n {
			t.Fatalf("%d tasks in flight at once, want %d", started, n)
		}
		select {
		case <-w.arrived:
		case <-deadline:
			t.Fatalf("only %d tasks in flight at once, want %d", started, n)
		}
	}
	w.clock.Advance(w.latency)
	w.open(false)
}

// open lets the current wave go; free lets every task after it answer at once.
func (w *waves) open(free bool) {
	w.mu.Lock()
	close(w.gate)
	w.gate, w.started, w.free = make(chan struct{}), 0, free
	w.mu.Unlock()
}

// runWaves runs n tasks through a pool of workers workers (0: sized by the pool) at limit, each
// taking latency of the fake clock, with the waves the test expects: wave[i] tasks in flight at
// once in the i-th; the tasks after the last wave answer at once. It returns the pool's log and
// the most tasks that were in flight at once.
func runWaves(t *testing.T, n int, limit rate.Limit, workers int, latency time.Duration, wave []int) (string, int) {
	t.Helper()
	clock := batchtest.NewClock(t0)
	w := newWaves(clock, latency)
	var logs batchtest.LogBuffer
	// A bucket as large as the tasks: the limiter never holds a task back, and still tells the
	// pool the rate it sizes itself to.
	limiter := rate.NewLimiter(limit, n)
	p := pool.New(pool.Config{Limiter: limiter, Workers: workers, BreakerThreshold: 3, Clock: clock,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}, w.handle)
	jobs := make([]job, n)
	for i := range jobs {
		jobs[i] = job{name: fmt.Sprint("R", i), at: t0, send: true}
	}
	errc := make(chan error, 1)
	go func() { errc <- p.Run(context.Background(), jobs, 0, n, nil) }()
	for _, k := range wave {
		w.next(t, k)
	}
	w.open(true)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	return logs.String(), w.most
}

// TestPoolSizesItselfToTheRate: at 40/s against a service answering in 150 ms, 6 requests must
// be in flight to keep the rate, more than the 4 workers a pool starts with. Left to size itself,
// the pool grows once its first 4 answers are timed (40/s × 150 ms × 1.25, rounded up, and one
// spare: 9), says so, and has 9 requests in flight at once.
func TestPoolSizesItselfToTheRate(t *testing.T) {
	logs, most := runWaves(t, 20, 40, 0, 150*time.Millisecond, []int{pool.AutoStartWorkers, 9})
	if !strings.Contains(logs, "the pool grew to 9 for --rate 40/s at the service's observed latency of 150 ms") {
		t.Errorf("the pool does not say it grew to 9 workers for the rate at the latency:\n%s", logs)
	}
	if most != 9 {
		t.Errorf("at most %d tasks in flight at once, want 9", most)
	}
	if strings.Contains(logs, "raise --workers") {
		t.Errorf("a pool that sizes itself was told to raise --workers:\n%s", logs)
	}
}

// TestTooFewWorkersSaidOnce: an explicit 2 workers at 40/s against a service answering in
// 100 ms can send 20/s at most: once 20 answers are timed the pool says so, once, and it keeps
// its 2 workers.
func TestTooFewWorkersSaidOnce(t *testing.T) {
	logs, most := runWaves(t, 30, 40, 2, 100*time.Millisecond, []int{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2})
	if n := strings.Count(logs, "raise --workers"); n != 1 {
		t.Fatalf("told %d times to raise --workers, want once:\n%s", n, logs)
	}
	want := regexp.MustCompile(`level=WARN msg="2 workers can send at most 20/s at the service's observed latency of 100 ms; --rate is 40/s: raise --workers to 6 or leave it unset"`)
	if !want.MatchString(logs) {
		t.Errorf("the warning does not say what limits the rate and what to do:\n%s", logs)
	}
	if most != 2 {
		t.Errorf("%d tasks in flight at once with 2 workers", most)
	}
	if strings.Contains(logs, "the pool grew") {
		t.Errorf("an explicit number of workers grew:\n%s", logs)
	}
}

// TestExplicitWorkersAtRateInfSaidNothing: with no rate limit there is no rate to fall short of.
func TestExplicitWorkersAtRateInfSaidNothing(t *testing.T) {
	logs, _ := runWaves(t, 30, rate.Inf, 2, 20*time.Millisecond, []int{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2})
	if strings.Contains(logs, "raise --workers") {
		t.Errorf("warned at rate inf:\n%s", logs)
	}
}
