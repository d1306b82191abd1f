package batch

import (
	"errors"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/ledger"
)

// This file turns the decisions of package outcome into the pool's tasks: when a row is sent or
// looked up again, and how long every request is held back after a 429.

// backoffs are the waits between tries.
type backoffs struct{ base, max time.Duration }

// retryWait is the wait the service asked for (Retry-After), else a backoff.
func (b backoffs) retryWait(err error, attempt int) time.Duration {
	var apiErr *api.Error
	if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
		return apiErr.RetryAfter
	}
	return backoff(b.base, b.max, attempt)
}

// rateLimitedRetry is the bound on 429s shared by sends and lookups, in runs and
// reconciliations: the wait the service asked for, and the task to try after it, or nil once the
// task has been limited outcome.MaxRateLimited times in a row.
func rateLimitedRetry(err error, t task, now time.Time, b backoffs) (time.Duration, *task) {
	wait := b.retryWait(err, t.attempt)
	if t.limited+1 >= maxRateLimited {
		return wait, nil
	}
	return wait, &task{ref: t.ref, kind: t.kind, at: now.Add(wait), attempt: t.attempt, limited: t.limited + 1, refused: t.refused}
}

// afterSend is what the answer to a row's POST does (outcome.AfterSend): the changes that record
// it, and the pool's result, with the follow-up task if there is one.
func afterSend(t task, created api.CreateResult, err error, now time.Time, b backoffs) ([]ledger.Change, taskResult) {
	var wait time.Duration
	var retry *task
	if api.KindOf(err) == api.KindRateLimited {
		wait, retry = rateLimitedRetry(err, t, now, b)
	}
	d := outcome.AfterSend(outcome.Send{Created: created, Err: err, Limited: t.limited, Wait: wait})
	for i := range d.Changes {
		d.Changes[i].Ref = t.ref
	}
	o := taskResult{Task: t, ServiceOK: d.ServiceOK, Failure: d.Failure, Throttled: d.RateLimited, Fatal: d.Fatal}
	if d.RateLimited {
		o.Pause = now.Add(wait)
	}
	switch d.Next {
	case outcome.Done:
		o.RowDone = true
	case outcome.LookUp:
		o.Next = &task{ref: t.ref, kind: taskLookup, at: now, refused: d.Refused}
	case outcome.LookUpLater:
		o.Next = &task{ref: t.ref, kind: taskLookup, at: now.Add(backoff(b.base, b.max, 0))}
	case outcome.SendLater:
		o.Next = &task{ref: t.ref, kind: taskSend, at: now.Add(backoff(b.base, b.max, t.attempt)), attempt: t.attempt + 1}
	case outcome.Throttled:
		o.Next = retry
	}
	return d.Changes, o
}
