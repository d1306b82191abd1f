package batchtest

import (
	"time"

	"github.com/payout/payout/batch/pool"
	"github.com/payout/payout/internal/fakeclock"
)

// Clock is the tests' one fake clock (fakeclock.Clock) as a run's pool takes it: a pool.Clock,
// and a Now func (Clock.Now).
type Clock struct{ *fakeclock.Clock }

// NewClock is a Clock at t.
func NewClock(t time.Time) *Clock { return &Clock{fakeclock.New(t)} }

// NewTimer is a timer that fires once the clock has been advanced by d.
func (c *Clock) NewTimer(d time.Duration) pool.Timer { return c.Clock.NewTimer(d) }
