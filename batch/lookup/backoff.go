package lookup

import (
	"errors"
	mrand "math/rand/v2"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/outcome"
)

// Backoff is the waits between tries: Base doubled per attempt, at most Max.
type Backoff struct{ Base, Max time.Duration }

// Step is the wait before try attempt+1: exponential with equal jitter, half the step fixed, so
// that waits grow, and half random, to spread the retries of many workers apart.
func (b Backoff) Step(attempt int) time.Duration {
	d := b.Base
	for i := 0; i < attempt && d < b.Max; i++ {
		d *= 2
	}
	if d > b.Max {
		d = b.Max
	}
	return d/2 + mrand.N(d/2+1)
}

// RetryWait is the wait the service asked for (Retry-After), else a Step.
func (b Backoff) RetryWait(err error, attempt int) time.Duration {
	var apiErr *api.Error
	if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
		return apiErr.RetryAfter
	}
	return b.Step(attempt)
}

// RateLimited is the bound on 429s shared by sends and lookups, in runs and reconciliations:
// the wait the service asked for, and the task to try after it, or nil once the task has been
// limited outcome.MaxRateLimited times in a row.
func (b Backoff) RateLimited(err error, t Task, now time.Time) (time.Duration, *Task) {
	wait := b.RetryWait(err, t.Attempt)
	if t.Limited+1 >= outcome.MaxRateLimited {
		return wait, nil
	}
	return wait, &Task{Ref: t.Ref, Kind: t.Kind, At: now.Add(wait), Attempt: t.Attempt, Limited: t.Limited + 1, Refused: t.Refused}
}
