package batch

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/time/rate"

	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/report"
)

// Bounds that keep one row from looping within a run; the row is then left for a rerun or for
// `payout reconcile`, in the state the ledger records.
const (
	maxRateLimited = outcome.MaxRateLimited // 429s in a row for one task
	// maxThrottled 429s in a row, whatever the payouts, stop a reconciliation (see
	// pool.throttleBreaker): the service keeps throttling although its Retry-After is
	// honoured, and the next reconcile, later, loses nothing.
	maxThrottled = maxRateLimited
)

// ErrThrottled stops a pool whose service answers nothing but 429.
var ErrThrottled = errors.New("the service is throttling (HTTP 429)")

// pool runs tasks through Config.Workers workers (0: as many as the rate needs, see sizer) at
// Config.Limiter's rate, each due at its time: a 429's Retry-After holds every request back,
// lookups of unknown outcomes (initial tasks) go before any send, BreakerThreshold failures in a
// row stop it, and so does the context (a signal). The run and reconcile each give it their
// handler.
type pool struct {
	cfg Config
	log *slog.Logger
	// handle does one task and records its outcome before it returns. Its context is never
	// cancelled: once a request may have been sent, its answer is recorded.
	handle func(ctx context.Context, t task) taskResult
	// throttleBreaker, when above zero, stops the pool after that many 429s in a row with no
	// other answer between them (ErrThrottled).
	throttleBreaker int
}

// do waits for the rate limiter and runs one task, unless the pool is being stopped: then
// nothing is sent, and the row stays as the ledger has it.
func (p *pool) do(ctx context.Context, t task) taskResult {
	if err := p.cfg.Limiter.Wait(ctx); err != nil || ctx.Err() != nil {
		return taskResult{task: t}
	}
	start := time.Now()
	o := p.handle(context.WithoutCancel(ctx), t)
	o.took = time.Since(start)
	return o
}

type taskKind int

const (
	taskSend   taskKind = iota // POST the payout: the row is READY
	taskLookup                 // GET it by external_invoice_ref: the row is UNKNOWN, or SUBMITTED without an invoice number
)

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

// outcome is what a worker reports back to the pool after one task.
type taskResult struct {
	task      task
	next      *task         // a follow-up for the same row, if any
	serviceOK bool          // the service answered something
	failure   bool          // the service did not answer: counts towards the circuit breaker
	throttled bool          // the service answered 429
	pause     time.Time     // 429: nothing is sent or looked up before this
	fatal     error         // stop the run
	rowDone   bool          // nothing more will happen to this row in this run
	took      time.Duration // the time the task took, its request and recording (0: nothing was sent)
}

// run hands due tasks to the workers until none is left and feed, when not nil, is closed; or
// the context ends, or the pool must stop. A worker takes one task at a time and reports its
// outcome only once everything the task sent is recorded. done of total rows are dealt with
// before it starts. More tasks come from feed while the queue runs low, so that a file of any
// size is held a chunk or two at a time.
func (p *pool) run(ctx context.Context, tasks []task, done, total int, feed <-chan feedBatch) error {
	st := &poolState{p: p, done: done, total: total, size: newSizer(p.cfg, p.log)}
	st.push(tasks)
	work := make(chan task)
	results := make(chan taskResult)
	workers := p.startWorkers(ctx, work, results, st.size.workers)
	defer workers.stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	ctxDone := ctx.Done()
	// graceSaid is the end of the grace last announced while nothing else was going on;
	// waitShown, that Config.Waiting was told and not yet told the wait is over.
	var (
		graceSaid time.Time
		waitShown bool
	)
	for {
		st.heedStop(ctx)
		if st.queue.Len() == 0 && st.inflight == 0 && (feed == nil || st.stopping) {
			break
		}
		// The next chunk is taken while the queue still has work for every worker; the pass that
		// feeds it has recorded it already, and records one more while this one is sent.
		var more <-chan feedBatch
		if feed != nil && !st.stopping && st.queue.Len() < 2*max(st.size.workers, st.size.max) {
			more = feed
		}
		var (
			out  chan task
			wake <-chan time.Time
		)
		now := p.cfg.Now()
		next, wait, ready := st.due(now)
		switch {
		case ready:
			out = work
		case wait > 0:
			timer.Reset(wait)
			wake = timer.C
			if head := st.queue[0]; st.inflight == 0 && head.kind == taskLookup && !head.graceEnd.IsZero() {
				if said := p.announceGrace(st.queue, now, graceSaid); said != graceSaid {
					graceSaid, waitShown = said, p.cfg.Waiting != nil
				}
			}
		}
		select {
		case out <- next:
			heap.Pop(&st.queue)
			st.inflight++
			if waitShown {
				p.cfg.Waiting(0, time.Time{})
				waitShown = false
			}
		case o := <-results:
			st.settle(o)
			workers.add(st.size.observe(o.took))
		case b, ok := <-more:
			if !st.take(b, ok) {
				feed = nil
			}
		case <-wake:
		case <-ctxDone:
			ctxDone = nil
			st.stop(context.Cause(ctx)) // the signal that stopped the command, if one did
		}
	}
	st.size.report()
	if st.stopReason != nil {
		p.log.Warn("run stopped; rerun to resume", "reason", st.stopReason.Error())
		return fmt.Errorf("%w: %w", ErrAborted, st.stopReason)
	}
	return nil
}

// startWorkers starts n workers that do the tasks of work and send their outcomes to results.
func (p *pool) startWorkers(ctx context.Context, work chan task, results chan<- taskResult, n int) *workerGroup {
	g := &workerGroup{p: p, ctx: ctx, work: work, results: results}
	g.add(n)
	return g
}

// poolState is what one pool.run keeps between events.
type poolState struct {
	p           *pool
	queue       taskQueue
	initial     int // initial lookups not yet answered: sends wait for them
	inflight    int
	failures    int // answers in a row that were no answer
	throttled   int // answers in a row that were 429
	done, total int
	pauseUntil  time.Time // a 429's Retry-After
	stopReason  error
	stopping    bool
	size        *sizer
}

// due says whether the queue's first task may go now, and otherwise how long until it may (zero:
// it waits for an answer, not for a time).
func (st *poolState) due(now time.Time) (task, time.Duration, bool) {
	if st.queue.Len() == 0 {
		return task{}, 0, false
	}
	head := st.queue[0]
	// Unknown outcomes are looked up once before anything new goes out.
	if head.kind == taskSend && st.initial > 0 {
		return task{}, 0, false
	}
	at := head.at
	// A 429's Retry-After holds every request back, lookups too: the service said so.
	if st.pauseUntil.After(at) {
		at = st.pauseUntil
	}
	if at.After(now) {
		return task{}, at.Sub(now), false
	}
	return head, 0, true
}

// take takes a chunk from the feed, and reports false when the feed is closed.
func (st *poolState) take(b feedBatch, ok bool) bool {
	switch {
	case !ok:
		return false
	case b.err != nil:
		st.stop(b.err)
	default:
		st.push(b.tasks)
		st.settleDone(b.done)
	}
	return true
}

func (st *poolState) push(tasks []task) {
	for _, t := range tasks {
		heap.Push(&st.queue, t)
		if t.initial {
			st.initial++
		}
	}
}

// settleDone counts the rows of a chunk just taken that needed nothing more, and shows progress.
func (st *poolState) settleDone(n int) {
	st.done += n
	if cfg := st.p.cfg; cfg.Progress != nil {
		cfg.Progress(st.done, st.total)
	}
}

// settle takes a worker's outcome: its follow-up, the breakers, the progress.
func (st *poolState) settle(o taskResult) {
	cfg := st.p.cfg
	st.inflight--
	if o.task.initial {
		st.initial--
	}
	switch {
	case o.serviceOK:
		st.failures, st.throttled = 0, 0
	case o.failure:
		st.failures++
	case o.throttled:
		st.throttled++
	}
	if o.pause.After(st.pauseUntil) {
		st.pauseUntil = o.pause
	}
	if o.next != nil {
		heap.Push(&st.queue, *o.next)
	}
	if o.rowDone {
		st.done++
		if cfg.Progress != nil {
			cfg.Progress(st.done, st.total)
		}
	}
	switch {
	case o.fatal != nil:
		st.stop(o.fatal)
	case st.failures >= cfg.BreakerThreshold:
		st.stop(fmt.Errorf("the service failed %d times in a row: stopped sending", st.failures))
	case st.p.throttleBreaker > 0 && st.throttled >= st.p.throttleBreaker:
		st.stop(fmt.Errorf("%w: %d answers in a row were 429", ErrThrottled, st.throttled))
	}
}

// stop ends handing out tasks; the first reason is the one reported.
// heedStop takes a stop the context asks for while rows are left, before anything more is
// handed out or taken in (select chooses at random among its ready cases: a run could otherwise
// drain after its stop and end as if it had finished), and empties the queue of a stopping run.
func (st *poolState) heedStop(ctx context.Context) {
	if !st.stopping && ctx.Err() != nil && st.done < st.total {
		st.stop(context.Cause(ctx)) // the signal that stopped the command, if one did
	}
	if st.stopping {
		// Rows not yet handed out stay as the ledger has them (READY or UNKNOWN): a rerun resumes them.
		st.queue = st.queue[:0]
	}
}

func (st *poolState) stop(reason error) {
	if st.stopReason == nil {
		st.stopReason = reason
	}
	st.stopping = true
}

// announceGrace says, once per grace end, what an idle run waits for: rows reported not found
// are looked up again, spaced out, until their grace is over, and only then may be sent again.
// A run that stood still at its last rows without a word looked hung.
func (p *pool) announceGrace(queue taskQueue, now, said time.Time) time.Time {
	n := 0
	var until time.Time
	for _, t := range queue {
		if !t.graceEnd.IsZero() {
			n++
			if t.graceEnd.After(until) {
				until = t.graceEnd
			}
		}
	}
	if !until.After(said) || !until.After(now) {
		return said // said already, or over already: nothing to wait for
	}
	wait := secondsUntil(now, until)
	p.log.Warn(fmt.Sprintf("waiting for the unknown-outcome grace: %d payouts whose outcome is unknown were not found by external_invoice_ref; they are looked up again until %s (%s from now) before any is sent again",
		n, report.FormatClock(until, p.cfg.Zone), wait), "payouts", n, "until", until, "wait", wait.String())
	if p.cfg.Waiting != nil {
		p.cfg.Waiting(n, until)
	}
	return until
}

// secondsUntil is how long from now until a later time, in whole seconds rounded up: a wait
// shown to a person is never negative, and never "0s" while there is still one to wait.
func secondsUntil(now, until time.Time) time.Duration {
	return max(until.Sub(now)+time.Second-1, 0).Truncate(time.Second)
}

// taskQueue is a min-heap of tasks: initial lookups first, whatever their due time (sends wait
// for them), then by due time.
type taskQueue []task

func (q taskQueue) Len() int { return len(q) }
func (q taskQueue) Less(i, j int) bool {
	if q[i].initial != q[j].initial {
		return q[i].initial
	}
	return q[i].at.Before(q[j].at)
}
func (q taskQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *taskQueue) Push(x any)   { *q = append(*q, x.(task)) }
func (q *taskQueue) Pop() any {
	old := *q
	t := old[len(old)-1]
	*q = old[:len(old)-1]
	return t
}

// Limiter paces the requests to the service: every send and lookup waits on it. A
// *rate.Limiter is one; a limiter shared by several processes can stand in for it.
type Limiter interface {
	// Wait blocks until a request may go, or returns ctx's error (or the limiter's, when ctx's
	// deadline would pass first).
	Wait(ctx context.Context) error
	// Limit is the most requests a second; rate.Inf for none.
	Limit() rate.Limit
}

var _ Limiter = (*rate.Limiter)(nil)
