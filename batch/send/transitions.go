package send

import (
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/lookup"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/ledger"
)

// afterSend is what the answer to a row's POST does (outcome.AfterSend): the changes that record
// it, and the pool's result, with the follow-up task if there is one.
func afterSend(t lookup.Task, created api.CreateResult, err error, now time.Time, b lookup.Backoff) ([]ledger.Change, lookup.Result) {
	var wait time.Duration
	var retry *lookup.Task
	if api.KindOf(err) == api.KindRateLimited {
		wait, retry = b.RateLimited(err, t, now)
	}
	d := outcome.AfterSend(outcome.Send{Created: created, Err: err, Limited: t.Limited, Wait: wait})
	for i := range d.Changes {
		d.Changes[i].Ref = t.Ref
	}
	o := lookup.Result{Task: t, ServiceOK: d.ServiceOK, Failure: d.Failure, Throttled: d.RateLimited, Fatal: d.Fatal}
	if d.RateLimited {
		o.Pause = now.Add(wait)
	}
	switch d.Next {
	case outcome.Done:
		o.RowDone = true
	case outcome.LookUp:
		o.Next = &lookup.Task{Ref: t.Ref, Kind: lookup.LookUp, At: now, Refused: d.Refused}
	case outcome.LookUpLater:
		o.Next = &lookup.Task{Ref: t.Ref, Kind: lookup.LookUp, At: now.Add(b.Step(0))}
	case outcome.SendLater:
		o.Next = &lookup.Task{Ref: t.Ref, Kind: lookup.Send, At: now.Add(b.Step(t.Attempt)), Attempt: t.Attempt + 1}
	case outcome.Throttled:
		o.Next = retry
	}
	return d.Changes, o
}
