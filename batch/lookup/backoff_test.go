package lookup_test

import (
	"errors"
	"testing"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/lookup"
	"github.com/payout/payout/batch/outcome"
)

// TestBackoffStepsGrowWithinTheirBound: each step is half fixed and half random, doubling per
// attempt up to Max.
func TestBackoffStepsGrowWithinTheirBound(t *testing.T) {
	b := lookup.Backoff{Base: 100 * time.Millisecond, Max: time.Second}
	for attempt, step := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		step *= time.Millisecond
		for range 50 {
			if d := b.Step(attempt); d < step/2 || d > step {
				t.Fatalf("attempt %d waits %s, want %s to %s", attempt, d, step/2, step)
			}
		}
	}
}

// TestBackoffRateLimited: a 429 waits what the service asked, keeps the task's kind, attempts and
// refusal, and is given up at outcome.MaxRateLimited in a row.
func TestBackoffRateLimited(t *testing.T) {
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	b := lookup.Backoff{Base: time.Millisecond, Max: 10 * time.Millisecond}
	limited := &api.Error{Kind: api.KindRateLimited, RetryAfter: 3 * time.Second}
	t0 := lookup.Task{Ref: "R1", Kind: lookup.LookUp, Attempt: 2, Refused: true}
	wait, next := b.RateLimited(limited, t0, now)
	if wait != 3*time.Second || next == nil {
		t.Fatalf("waits %s, next %+v: want Retry-After and a retry", wait, next)
	}
	if want := (lookup.Task{Ref: "R1", Kind: lookup.LookUp, At: now.Add(wait), Attempt: 2, Limited: 1, Refused: true}); *next != want {
		t.Errorf("retry %+v, want %+v", *next, want)
	}
	last := t0
	last.Limited = outcome.MaxRateLimited - 1
	if _, next := b.RateLimited(limited, last, now); next != nil {
		t.Errorf("retried after %d 429s in a row: %+v", outcome.MaxRateLimited, *next)
	}
	if wait := b.RetryWait(errors.New("connection refused"), 0); wait < time.Millisecond/2 || wait > time.Millisecond {
		t.Errorf("an error with no Retry-After waits %s, want a step of the backoff", wait)
	}
}
