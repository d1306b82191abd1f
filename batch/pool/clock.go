package pool

import (
	"context"
	"time"
)

// Clock is the pool's time: what time it is, and timers that fire at a time of its own.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) Timer
}

// Timer is a timer of a Clock.
type Timer interface {
	C() <-chan time.Time
	// Reset makes the timer fire d from now, whether or not it fired or was stopped.
	Reset(d time.Duration)
	Stop()
}

// WallClock is the system's timers, with now telling the time (time.Now when nil): a run's
// Config.Now, which its tests may set.
func WallClock(now func() time.Time) Clock {
	if now == nil {
		now = time.Now
	}
	return wallClock{now: now}
}

type wallClock struct{ now func() time.Time }

func (c wallClock) Now() time.Time { return c.now() }

func (c wallClock) NewTimer(d time.Duration) Timer { return wallTimer{time.NewTimer(d)} }

type wallTimer struct{ t *time.Timer }

func (w wallTimer) C() <-chan time.Time   { return w.t.C }
func (w wallTimer) Reset(d time.Duration) { w.t.Reset(d) }
func (w wallTimer) Stop()                 { w.t.Stop() }

// Sleep waits for d on clock, or less when ctx ends first, and then returns ctx's error.
func Sleep(ctx context.Context, clock Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}
