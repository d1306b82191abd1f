package batchtest

import (
	"sync"
	"time"

	"github.com/payout/payout/batch/pool"
)

// Clock is the tests' one fake clock: it tells the time it was set to, moves only when Advance
// says so, and fires the timers whose time has come then. It serves as a pool.Clock and as any
// Now func (Clock.Now).
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	armed  chan struct{} // closed and replaced whenever a timer is set
}

// NewClock is a Clock at t.
func NewClock(t time.Time) *Clock {
	return &Clock{now: t, armed: make(chan struct{})}
}

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d and fires every timer due by then.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	now := c.now
	timers := append([]*fakeTimer(nil), c.timers...)
	c.mu.Unlock()
	for _, t := range timers {
		t.fireIfDue(now)
	}
}

// WaitForTimer blocks until a timer of the clock is set to fire after its time, and returns when
// it fires: what a goroutine under test waits for, so that the test advances the clock only
// once it waits.
func (c *Clock) WaitForTimer() time.Time {
	for {
		c.mu.Lock()
		armed := c.armed
		var next time.Time
		for _, t := range c.timers {
			if at, ok := t.pending(); ok && at.After(c.now) && (next.IsZero() || at.Before(next)) {
				next = at
			}
		}
		c.mu.Unlock()
		if !next.IsZero() {
			return next
		}
		<-armed
	}
}

// NewTimer is a timer that fires once the clock has been advanced by d.
func (c *Clock) NewTimer(d time.Duration) pool.Timer {
	t := &fakeTimer{c: c, ch: make(chan time.Time, 1)}
	c.mu.Lock()
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	t.Reset(d)
	return t
}

type fakeTimer struct {
	c      *Clock
	ch     chan time.Time
	mu     sync.Mutex
	at     time.Time
	active bool
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Reset(d time.Duration) {
	now := t.c.Now()
	select {
	case <-t.ch: // as a time.Timer's Reset: no tick of before it is read after it
	default:
	}
	t.mu.Lock()
	t.at, t.active = now.Add(d), true
	t.mu.Unlock()
	t.c.mu.Lock()
	close(t.c.armed)
	t.c.armed = make(chan struct{})
	t.c.mu.Unlock()
	t.fireIfDue(now)
}

func (t *fakeTimer) Stop() {
	t.mu.Lock()
	t.active = false
	t.mu.Unlock()
}

func (t *fakeTimer) pending() (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.at, t.active
}

func (t *fakeTimer) fireIfDue(now time.Time) {
	t.mu.Lock()
	due := t.active && !t.at.After(now)
	if due {
		t.active = false
	}
	t.mu.Unlock()
	if due {
		select {
		case t.ch <- now:
		default: // a tick not yet read: a timer holds one
		}
	}
}

// Drive moves the clock to each timer's time as soon as one is set, as if every wait were over
// at once, until the returned stop is called: what a whole run under test needs, whose waits
// are many and not known in advance.
func (c *Clock) Drive() (stop func()) {
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		for {
			at := c.WaitForTimer()
			select {
			case <-done:
				return
			default:
			}
			if d := at.Sub(c.Now()); d > 0 {
				c.Advance(d)
			}
		}
	}()
	return func() {
		close(done)
		c.NewTimer(time.Nanosecond) // left set: the driver, woken, finds it and sees done
		<-exited
	}
}
