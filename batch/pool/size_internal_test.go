package pool

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

func sizerFor(limit rate.Limit, workers int) *sizer {
	return newSizer(Config{Limiter: rate.NewLimiter(limit, 1), Workers: workers}, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// observeN feeds n answers that each took took and returns the workers added.
func observeN(s *sizer, n int, took time.Duration) int {
	added := 0
	for range n {
		added += s.observe(took)
	}
	return added
}

// TestSizerGrowsToTheRateTimesTheLatency: at 40/s and 150 ms a request, 6 requests are in flight
// on average; with the margin and one spare the pool grows from 4 to 9, only once answers are
// timed, and never shrinks.
func TestSizerGrowsToTheRateTimesTheLatency(t *testing.T) {
	s := sizerFor(40, 0)
	if s.workers != AutoStartWorkers {
		t.Fatalf("starts with %d workers, want %d", s.workers, AutoStartWorkers)
	}
	if added := observeN(s, sizeAfterAnswers-1, 150*time.Millisecond); added != 0 {
		t.Fatalf("grew by %d before %d answers were timed", added, sizeAfterAnswers)
	}
	if added := s.observe(150 * time.Millisecond); added != 5 || s.workers != 9 {
		t.Fatalf("added %d to reach %d workers, want 5 to reach 9", added, s.workers)
	}
	if added := observeN(s, 50, 10*time.Millisecond); added != 0 || s.workers != 9 {
		t.Fatalf("a faster service changed the pool by %d to %d workers; it only grows", added, s.workers)
	}
	if added := s.observe(0); added != 0 || s.answers != 54 {
		t.Fatalf("a task that sent nothing was timed")
	}
}

// TestSizerSlowFirstAnswerDoesNotSizeThePool: a first request that took 2 s (a connection set up)
// and then answers in 50 ms: at 100/s the pool needs 8 workers, not 250.
func TestSizerSlowFirstAnswerDoesNotSizeThePool(t *testing.T) {
	s := sizerFor(100, 0)
	s.observe(2 * time.Second)
	observeN(s, sizeAfterAnswers-1, 50*time.Millisecond)
	if s.workers != 8 {
		t.Errorf("%d workers after a slow first answer, want 8 (100/s × 50 ms × 1.25, and one)", s.workers)
	}
}

// TestSizerBounds: a slow service grows the pool to AutoMaxWorkers at most; at rate inf, where
// no need can be computed, to AutoUnlimitedWorkers; an explicit number is never grown.
func TestSizerBounds(t *testing.T) {
	slow := sizerFor(100, 0)
	observeN(slow, 10, 5*time.Second)
	if slow.workers != AutoMaxWorkers {
		t.Errorf("rate 100 at 5 s: %d workers, want the bound %d", slow.workers, AutoMaxWorkers)
	}
	inf := sizerFor(rate.Inf, 0)
	observeN(inf, 10, time.Millisecond)
	if inf.workers != AutoUnlimitedWorkers {
		t.Errorf("rate inf: %d workers, want %d", inf.workers, AutoUnlimitedWorkers)
	}
	explicit := sizerFor(100, 2)
	if added := observeN(explicit, 50, time.Second); added != 0 || explicit.workers != 2 {
		t.Errorf("explicit 2 workers grew by %d", added)
	}
	fast := sizerFor(10, 0)
	if added := observeN(fast, 10, 20*time.Millisecond); added != 0 || fast.workers != AutoStartWorkers {
		t.Errorf("rate 10 at 20 ms needs fewer than %d workers; grew by %d", AutoStartWorkers, added)
	}
}
