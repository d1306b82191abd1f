package pool

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/time/rate"
)

// staleTurnTries bounds how often TakeTurn gives a stale turn up: past it the request goes on a
// late turn rather than never (a machine so loaded that every proof outlasts a turn's interval).
const staleTurnTries = 20

// Proof is what a SelfPaced request proves before it leaves (a ledger.Fence): Held says, at no
// cost, whether the last proof still stands; Confirm proves it again.
type Proof interface {
	Confirm(ctx context.Context) error
	Held() bool
}

// DueLimiter is a Limiter that tells when the turn it waited for was due, as early as it may
// have been on the local clock: a limiter whose turns are granted elsewhere (a database) learns
// of them a round trip late, and a process the machine scheduled late wakes late.
type DueLimiter interface {
	WaitDue(ctx context.Context) (time.Time, error)
}

// TakeTurn takes the limiter's turn for one request of a SelfPaced task whose proof was
// confirmed before (nil for none), and returns once the proof still holds at a fresh turn. A
// turn is stale when it is had, or the proof made again after it (the turn came late, or the
// process was paused), more than one interval of the limit after it was due (DueLimiter): it is
// given up and another taken, so that requests leave within an interval of their turns and never
// bunch, whatever waited before them (a stall) or delayed the turn itself. The proof's error is
// returned as it is; the limiter's is wrapped (a request it did not pace must not go).
func TakeTurn(ctx context.Context, lim Limiter, clock Clock, proof Proof) error {
	if clock == nil {
		clock = WallClock(nil)
	}
	fresh := time.Duration(0) // no bound without a limit
	if l := lim.Limit(); l != rate.Inf && l > 0 {
		fresh = max(time.Duration(float64(time.Second)/float64(l)), 10*time.Millisecond)
	}
	for try := 1; ; try++ {
		// Nothing is sent yet: a signal stops the wait.
		due, err := waitDue(Stopping(ctx), lim, clock)
		if err != nil {
			return fmt.Errorf("the rate limiter: %w", err)
		}
		if proof != nil && !proof.Held() {
			if err := proof.Confirm(ctx); err != nil {
				return err
			}
		}
		if fresh == 0 || clock.Now().Sub(due) <= fresh || try >= staleTurnTries {
			return nil
		}
	}
}

// waitDue waits for a turn and returns when it was due.
func waitDue(ctx context.Context, lim Limiter, clock Clock) (time.Time, error) {
	if dl, ok := lim.(DueLimiter); ok {
		return dl.WaitDue(ctx)
	}
	if err := lim.Wait(ctx); err != nil {
		return time.Time{}, err
	}
	return clock.Now(), nil
}
