package fakeclock

import (
	"sync"
	"time"
)

// Clock tells the time it was set to, moves only when Advance says so, and fires the timers
// whose time has come then. Clock.Now serves as any Now func.
//
// A jumping Clock (NewJumping) moves itself instead: see there.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*Timer
	armed   chan struct{} // closed and replaced whenever a timer is set
	jumping bool
}

// New is a Clock at t.
func New(t time.Time) *Clock {
	return &Clock{now: t, armed: make(chan struct{})}
}

// NewJumping is a Clock at t whose every timer fires as soon as it is set, moving the clock on
// to the timer's time if it is not there yet (never back): each wait ends as early as it could,
// so that a test whose waits are many, and concurrent, waits for none of them in real time, and
// whatever reads the clock (a rate limiter, a service counting requests a second) sees the
// time those waits took. Waits set at one time overlap, as in real time: 20 ms and 10 ms leave
// the clock 20 ms on. A wait set once another has moved the clock starts from there, so waits
// that real time would overlap add up when they are set one after the other. Advance and
// Ticking still move it.
//
// It suits code whose every timer is a sleep: a wait that ends only when its time comes. A
// timeout that races another event (an answer against a deadline) would expire at once. It
// keeps no timer, so WaitForTimer and Drive, which wait for one, are for a clock moved by hand.
func NewJumping(t time.Time) *Clock {
	return &Clock{now: t, armed: make(chan struct{}), jumping: true}
}

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d and fires every timer due by then.
func (c *Clock) Advance(d time.Duration) {
	c.move(d)
}

// Ticking is a Now func that moves the clock on by step at every reading, and tells the time it
// moved to: what a ledger that stamps every write with its time needs, so that no two stamps are
// equal, even when read at once.
func (c *Clock) Ticking(step time.Duration) func() time.Time {
	return func() time.Time { return c.move(step) }
}

// move moves the clock on by d, fires every timer due by then, and returns the time moved to.
func (c *Clock) move(d time.Duration) time.Time {
	c.mu.Lock()
	c.now = c.now.Add(d)
	now := c.now
	timers := append([]*Timer(nil), c.timers...)
	c.mu.Unlock()
	for _, t := range timers {
		t.fireIfDue(now)
	}
	return now
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

// NewTimer is a timer that fires once the clock has been advanced by d; on a jumping clock, at
// once.
func (c *Clock) NewTimer(d time.Duration) *Timer {
	t := c.newTimer()
	t.Reset(d)
	return t
}

// NewTimerAt is a timer that fires once the clock is at at; on a jumping clock, at once. A wait
// for a time decided before (a rate limiter's turn) ends then, however far other waits have
// moved the clock since: a timer of the duration left, set after they did, would end later.
func (c *Clock) NewTimerAt(at time.Time) *Timer {
	t := c.newTimer()
	t.resetAt(at)
	return t
}

func (c *Clock) newTimer() *Timer {
	t := &Timer{c: c, ch: make(chan time.Time, 1)}
	if !c.jumping { // a jumping clock's timers are never fired by a move: it keeps none
		c.mu.Lock()
		c.timers = append(c.timers, t)
		c.mu.Unlock()
	}
	return t
}

// jumpTo moves the clock on to at, unless it is there already, and returns its time then.
func (c *Clock) jumpTo(at time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if at.After(c.now) {
		c.now = at
	}
	return c.now
}

// Timer is a timer of a Clock, with the methods of a time.Timer.
type Timer struct {
	c      *Clock
	ch     chan time.Time
	mu     sync.Mutex
	at     time.Time
	active bool
}

// C is the channel the timer's tick is sent on.
func (t *Timer) C() <-chan time.Time { return t.ch }

// Reset makes the timer fire once the clock is d past its time now; on a jumping clock, at once.
func (t *Timer) Reset(d time.Duration) {
	t.resetAt(t.c.Now().Add(d))
}

func (t *Timer) resetAt(at time.Time) {
	select {
	case <-t.ch: // as a time.Timer's Reset: no tick of before it is read after it
	default:
	}
	t.mu.Lock()
	t.at, t.active = at, true
	t.mu.Unlock()
	if t.c.jumping {
		t.fireIfDue(t.c.jumpTo(at))
		return
	}
	t.c.mu.Lock()
	close(t.c.armed)
	t.c.armed = make(chan struct{})
	t.c.mu.Unlock()
	t.fireIfDue(t.c.Now())
}

// Stop keeps the timer from firing until it is Reset.
func (t *Timer) Stop() {
	t.mu.Lock()
	t.active = false
	t.mu.Unlock()
}

func (t *Timer) pending() (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.at, t.active
}

func (t *Timer) fireIfDue(now time.Time) {
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
