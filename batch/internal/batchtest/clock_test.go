package batchtest_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/payout/payout/batch/internal/batchtest"
)

var t0 = time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)

// TestLimiterPacesOnItsClock: turns taken at once by many goroutines are a turn's interval
// apart on the clock, which moves to the last of them, with no real wait.
func TestLimiterPacesOnItsClock(t *testing.T) {
	t.Parallel()
	clock := batchtest.NewJumpingClock(t0)
	lim := batchtest.NewLimiter(clock, 100, 1)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if err := lim.Wait(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// The first turn is the burst's, at once; nine more follow, 10 ms apart.
	if got, want := clock.Now().Sub(t0), 90*time.Millisecond; got != want {
		t.Errorf("ten turns at 100 a second moved the clock %v, want %v", got, want)
	}
	if lim.Limit() != 100 {
		t.Errorf("limit %v, want 100", lim.Limit())
	}
}

// TestLimiterTakesNoTurnForAnEndedContext: as a rate.Limiter, a wait whose context has ended
// returns its error and leaves the turn to the next.
func TestLimiterTakesNoTurnForAnEndedContext(t *testing.T) {
	t.Parallel()
	clock := batchtest.NewJumpingClock(t0)
	lim := batchtest.NewLimiter(clock, 100, 1)
	if err := lim.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if err := lim.Wait(ended); !errors.Is(err, context.Canceled) {
		t.Fatalf("wait with an ended context: %v, want context.Canceled", err)
	}
	if err := lim.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := clock.Now().Sub(t0), 10*time.Millisecond; got != want {
		t.Errorf("two turns moved the clock %v, want %v: the ended wait took none", got, want)
	}
}
