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

// TakeTurn takes the limiter's turn for one request of a SelfPaced task whose proof was
// confirmed before (nil for none), and returns once the proof still holds at the turn. When it
// no longer does (the turn came late, or the process was paused), the proof is confirmed again,
// and a turn that went stale meanwhile (longer than one interval of the limit) is given up and
// another taken: requests leave right after their turns, however long anything before them
// waited, and never bunch at the end of a stall. The proof's error is returned as it is; the
// limiter's is wrapped (a request it did not pace must not go).
func TakeTurn(ctx context.Context, lim Limiter, clock Clock, proof Proof) error {
	if clock == nil {
		clock = WallClock(nil)
	}
	fresh := time.Duration(0) // no bound without a limit
	if l := lim.Limit(); l != rate.Inf && l > 0 {
		fresh = max(time.Duration(float64(time.Second)/float64(l)), 10*time.Millisecond)
	}
	for try := 1; ; try++ {
		if err := lim.Wait(ctx); err != nil {
			return fmt.Errorf("the rate limiter: %w", err)
		}
		if proof == nil || proof.Held() {
			return nil
		}
		turn := clock.Now()
		if err := proof.Confirm(ctx); err != nil {
			return err
		}
		if fresh == 0 || clock.Now().Sub(turn) <= fresh || try >= staleTurnTries {
			return nil
		}
	}
}
