package batchtest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/payout/payout/batch/pool"
	"github.com/payout/payout/internal/fakeclock"
)

// Clock is the tests' one fake clock (fakeclock.Clock) as a run's pool takes it: a pool.Clock,
// and a Now func (Clock.Now).
type Clock struct{ *fakeclock.Clock }

// NewClock is a Clock at t, moved by hand.
func NewClock(t time.Time) *Clock { return &Clock{fakeclock.New(t)} }

// NewJumpingClock is a Clock at t whose timers end as they are set, moving it on to their time
// (fakeclock.NewJumping): the time of a whole run, whose waits are all sleeps.
func NewJumpingClock(t time.Time) *Clock { return &Clock{fakeclock.NewJumping(t)} }

// NewTimer is a timer that fires once the clock has been advanced by d.
func (c *Clock) NewTimer(d time.Duration) pool.Timer { return c.Clock.NewTimer(d) }

// After is the channel of a timer of d, as time.After: a sandbox's Options.After.
func (c *Clock) After(d time.Duration) <-chan time.Time { return c.Clock.NewTimer(d).C() }

// Limiter is a rate.Limiter whose turns are reserved at a Clock's time and waited for on its
// timers: on a jumping clock, the rate holds in the clock's time and no turn is waited for in
// real time. It is a pool.Limiter.
//
// It tells no due time (it is no pool.DueLimiter): other goroutines' waits move a jumping clock
// on while a turn is had, which would make most turns look stale.
type Limiter struct {
	clock *Clock
	// mu makes the reservations in the clock's order: a rate.Limiter given a time before the
	// one it was last given grants turns that bunch.
	mu  sync.Mutex
	lim *rate.Limiter
}

var _ pool.Limiter = (*Limiter)(nil)

// NewLimiter is a Limiter of limit a second with a burst of burst on clock.
func NewLimiter(clock *Clock, limit rate.Limit, burst int) *Limiter {
	return &Limiter{clock: clock, lim: rate.NewLimiter(limit, burst)}
}

// Limit is the limiter's rate.
func (l *Limiter) Limit() rate.Limit { return l.lim.Limit() }

// Wait waits on the clock for the next turn, or until ctx ends.
func (l *Limiter) Wait(ctx context.Context) error {
	// As a rate.Limiter's: an ended ctx takes no turn. Its wait, ending at once, might win the
	// race with ctx's end.
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	now := l.clock.Now()
	r := l.lim.ReserveN(now, 1)
	l.mu.Unlock()
	if !r.OK() {
		return fmt.Errorf("no turn of %v a second with a burst of %d", l.lim.Limit(), l.lim.Burst())
	}
	// The turn is at a time, not a wait from now: others' waits may have moved the clock since.
	turn := l.clock.NewTimerAt(now.Add(r.DelayFrom(now)))
	defer turn.Stop()
	select {
	case <-turn.C():
		return nil
	case <-ctx.Done():
		l.mu.Lock()
		r.CancelAt(l.clock.Now())
		l.mu.Unlock()
		return ctx.Err()
	}
}
