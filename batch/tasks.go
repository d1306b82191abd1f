package batch

import (
	"context"
	"log/slog"
	"time"

	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/pool"
)

// Bounds that keep one row from looping within a run; the row is then left for a rerun or for
// `payout reconcile`, in the state the ledger records.
const (
	maxRateLimited = outcome.MaxRateLimited // 429s in a row for one task
	// maxThrottled 429s in a row, whatever the payouts, stop a reconciliation (see
	// pool.Config.ThrottleBreaker): the service keeps throttling although its Retry-After is
	// honoured, and the next reconcile, later, loses nothing.
	maxThrottled = maxRateLimited
)

// Limiter paces the requests to the service: every send and lookup waits on it (pool.Limiter).
type Limiter = pool.Limiter

type taskKind int

const (
	taskSend   taskKind = iota // POST the payout: the row is READY
	taskLookup                 // GET it by external_invoice_ref: the row is UNKNOWN, or SUBMITTED without an invoice number
)

// task is one send or lookup of a row, as the pool schedules it.
type task struct {
	ref     string
	kind    taskKind
	at      time.Time
	attempt int  // earlier tries of this kind that ended in an error
	limited int  // 429s in a row for this task
	resend  bool // a send after "not found" proved the earlier one created nothing
	initial bool // a lookup that must finish before anything new is sent
	// refused is a lookup that confirms the service's refusal of the row's create: "not found"
	// makes the row final FAILED, where an UNKNOWN row would wait out the grace.
	refused bool
	// graceEnd, on a lookup of a row reported not found, is when its grace is over: until then
	// it is only looked up.
	graceEnd time.Time
}

func (t task) Due() time.Time      { return t.at }
func (t task) First() bool         { return t.initial }
func (t task) Waits() bool         { return t.kind == taskSend }
func (t task) GraceEnd() time.Time { return t.graceEnd }

// taskResult is what a worker reports back to the pool after one task.
type taskResult = pool.Result[task]

// feedBatch is a chunk's work for the pool: its tasks, how many of its rows need nothing more,
// or the error that stopped the feed.
type feedBatch = pool.Feed[task]

// newPool is a pool with the run's rate, workers, breaker, clock and callbacks, handling each
// task with handle; throttleBreaker, when above zero, stops it after that many 429s in a row.
func (r *Runner) newPool(log *slog.Logger, handle func(context.Context, task) taskResult, throttleBreaker int) *pool.Pool[task] {
	cfg := r.cfg
	return pool.New(pool.Config{Limiter: cfg.Limiter, Workers: cfg.Workers, BreakerThreshold: cfg.BreakerThreshold,
		ThrottleBreaker: throttleBreaker, Clock: cfg.Clock, Logger: log, Zone: cfg.Zone,
		Progress: cfg.Progress, Waiting: cfg.Waiting}, handle)
}

// logSending logs the start of a run's sending: how many rows, at what rate, with how many workers.
func (r *Runner) logSending(log *slog.Logger, total int) {
	workers := any(r.cfg.Workers)
	if r.cfg.Workers == 0 {
		workers = "sized from the rate and the service's latency"
	}
	log.Info("recording and sending", "rows_to_pay", total, "rate", float64(r.cfg.Limiter.Limit()), "workers", workers)
}
