package fakeclock_test

import (
	"sync"
	"testing"
	"time"

	"github.com/payout/payout/internal/fakeclock"
)

var t0 = time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)

func TestJumpingTimerFiresAtOnceAtItsTime(t *testing.T) {
	c := fakeclock.NewJumping(t0)
	timer := c.NewTimer(20 * time.Millisecond)
	select {
	case at := <-timer.C():
		if want := t0.Add(20 * time.Millisecond); !at.Equal(want) || !c.Now().Equal(want) {
			t.Errorf("fired at %v with the clock at %v, want both at %v", at, c.Now(), want)
		}
	default:
		t.Fatal("a jumping clock's timer did not fire as it was set")
	}
}

func TestJumpingClockNeverMovesBack(t *testing.T) {
	c := fakeclock.NewJumping(t0)
	<-c.NewTimer(20 * time.Millisecond).C()
	c.Advance(time.Second)
	// Set at t0+1s+20ms, the timer is due at t0+1s+25ms: nothing it waits for is passed already.
	timer := c.NewTimer(5 * time.Millisecond)
	if at := <-timer.C(); !at.Equal(t0.Add(time.Second + 25*time.Millisecond)) {
		t.Errorf("fired at %v, want t0+1.025s", at)
	}
	timer.Reset(0)
	if at := <-timer.C(); !at.Equal(t0.Add(time.Second + 25*time.Millisecond)) {
		t.Errorf("a timer of no wait fired at %v, want the clock's time, t0+1.025s", at)
	}
}

// TestJumpingConcurrentSleeps: concurrent sleepers leave the clock at least the longest sleep
// on, and at most their sum: each sleep starts where the clock is when it is set.
func TestJumpingConcurrentSleeps(t *testing.T) {
	c := fakeclock.NewJumping(t0)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { <-c.NewTimer(time.Duration(i+1) * time.Millisecond).C() })
	}
	wg.Wait()
	// Each timer is set at the clock's time then: at least 8 ms on (the longest set first), at
	// most 1+2+...+8 ms (each set after the last fired).
	if d := c.Now().Sub(t0); d < 8*time.Millisecond || d > 36*time.Millisecond {
		t.Errorf("the clock moved %v, want 8 ms to 36 ms", d)
	}
}

func TestJumpingTimerStoppedBeforeRead(t *testing.T) {
	c := fakeclock.NewJumping(t0)
	timer := c.NewTimer(time.Millisecond)
	timer.Stop()
	timer.Reset(2 * time.Millisecond)
	if at := <-timer.C(); !at.Equal(t0.Add(3 * time.Millisecond)) {
		t.Errorf("fired at %v, want t0+3ms: the tick of before the Reset is not read after it", at)
	}
}

// TestJumpingTimerAtATimePassedMovesNothing: a timer at a time the clock has passed fires at
// the clock's time; one at a later time moves the clock there, not past it.
func TestJumpingTimerAtATimePassedMovesNothing(t *testing.T) {
	c := fakeclock.NewJumping(t0)
	<-c.NewTimer(20 * time.Millisecond).C()
	if at := <-c.NewTimerAt(t0.Add(10 * time.Millisecond)).C(); !at.Equal(t0.Add(20 * time.Millisecond)) {
		t.Errorf("a timer at a time passed fired at %v, want the clock's time, t0+20ms", at)
	}
	if at := <-c.NewTimerAt(t0.Add(30 * time.Millisecond)).C(); !at.Equal(t0.Add(30*time.Millisecond)) || !c.Now().Equal(at) {
		t.Errorf("a timer at t0+30ms fired at %v with the clock at %v, want both at t0+30ms", at, c.Now())
	}
}

// TestManualTimerFiresOnlyOnceAdvanced: a timer set for a while from now, or at a time, fires
// once the clock is moved there, and not a moment before.
func TestManualTimerFiresOnlyOnceAdvanced(t *testing.T) {
	for name, set := range map[string]func(c *fakeclock.Clock) *fakeclock.Timer{
		"after 10ms": func(c *fakeclock.Clock) *fakeclock.Timer { return c.NewTimer(10 * time.Millisecond) },
		"at t0+10ms": func(c *fakeclock.Clock) *fakeclock.Timer { return c.NewTimerAt(t0.Add(10 * time.Millisecond)) },
	} {
		t.Run(name, func(t *testing.T) {
			c := fakeclock.New(t0)
			timer := set(c)
			c.Advance(9 * time.Millisecond)
			select {
			case <-timer.C():
				t.Fatal("fired before its time")
			default:
			}
			c.Advance(time.Millisecond)
			if at := <-timer.C(); !at.Equal(t0.Add(10 * time.Millisecond)) {
				t.Errorf("fired at %v, want t0+10ms", at)
			}
		})
	}
}
