package batch

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Bounds that keep one row from looping within a run; the row is then left for a rerun or for
// `payout reconcile`, in the state the ledger records.
const (
	maxRateLimited = 30 // 429s in a row for one task
	// maxThrottled 429s in a row, whatever the payouts, stop a reconciliation (see
	// pool.throttleBreaker): the service keeps throttling although its Retry-After is
	// honoured, and the next reconcile, later, loses nothing.
	maxThrottled = maxRateLimited
)

// errThrottled stops a pool whose service answers nothing but 429.
var errThrottled = errors.New("the service is throttling (HTTP 429)")

// pool runs tasks through Config.Workers workers at Config.Limiter's rate, each due at its time:
// a 429's Retry-After holds every request back, lookups of unknown outcomes (initial tasks) go
// before any send, BreakerThreshold failures in a row stop it, and so does the context (a
// signal). The run and reconcile each give it their handler.
type pool struct {
	cfg Config
	log *slog.Logger
	// handle does one task and records its outcome before it returns. Its context is never
	// cancelled: once a request may have been sent, its answer is recorded.
	handle func(ctx context.Context, t task) outcome
	// throttleBreaker, when above zero, stops the pool after that many 429s in a row with no
	// other answer between them (errThrottled).
	throttleBreaker int
}

// do waits for the rate limiter and runs one task, unless the pool is being stopped: then
// nothing is sent, and the row stays as the ledger has it.
func (p *pool) do(ctx context.Context, t task) outcome {
	if err := p.cfg.Limiter.Wait(ctx); err != nil || ctx.Err() != nil {
		return outcome{task: t}
	}
	return p.handle(context.WithoutCancel(ctx), t)
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
type outcome struct {
	task      task
	next      *task     // a follow-up for the same row, if any
	serviceOK bool      // the service answered something
	failure   bool      // the service did not answer: counts towards the circuit breaker
	throttled bool      // the service answered 429
	pause     time.Time // 429: nothing is sent or looked up before this
	fatal     error     // stop the run
	rowDone   bool      // nothing more will happen to this row in this run
}

// run hands due tasks to the workers until none is left, the context ends, or the run must
// stop. A worker takes one task at a time and reports its outcome only once everything the task
// sent is recorded.
func (p *pool) run(ctx context.Context, tasks []task, done, total int) error {
	cfg := p.cfg
	queue := &taskQueue{}
	initial := 0
	for _, t := range tasks {
		heap.Push(queue, t)
		if t.initial {
			initial++
		}
	}
	work := make(chan task)
	results := make(chan outcome)
	var wg sync.WaitGroup
	for i := 0; i < cfg.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range work {
				results <- p.do(ctx, t)
			}
		}()
	}
	defer func() {
		close(work)
		wg.Wait()
	}()

	var (
		inflight   int
		failures   int
		throttled  int
		pauseUntil time.Time
		stopReason error
		stopping   bool
		ctxDone    = ctx.Done()
		timer      = time.NewTimer(time.Hour)
	)
	defer timer.Stop()
	// graceSaid is the end of the grace last announced while nothing else was going on;
	// waitShown, that Config.Waiting was told and not yet told the wait is over.
	var (
		graceSaid time.Time
		waitShown bool
	)
	stop := func(reason error) {
		if stopReason == nil {
			stopReason = reason
		}
		stopping = true
	}
	for {
		if stopping {
			// Rows not yet handed out stay as the ledger has them (READY or UNKNOWN): a rerun resumes them.
			*queue = (*queue)[:0]
		}
		if queue.Len() == 0 && inflight == 0 {
			break
		}
		var (
			out  chan task
			next task
			wake <-chan time.Time
		)
		now := cfg.Now()
		if queue.Len() > 0 {
			head := (*queue)[0]
			at := head.at
			// A 429's Retry-After holds every request back, lookups too: the service said so.
			if pauseUntil.After(at) {
				at = pauseUntil
			}
			// Unknown outcomes are looked up once before anything new goes out.
			held := head.kind == taskSend && initial > 0
			switch {
			case !held && !at.After(now):
				out, next = work, head
			case !held:
				timer.Reset(at.Sub(now))
				wake = timer.C
			}
		}
		if wake != nil && inflight == 0 && (*queue)[0].kind == taskLookup && !(*queue)[0].graceEnd.IsZero() {
			if said := p.announceGrace(*queue, now, graceSaid); said != graceSaid {
				graceSaid, waitShown = said, cfg.Waiting != nil
			}
		}
		select {
		case out <- next:
			heap.Pop(queue)
			inflight++
			if waitShown {
				cfg.Waiting(0, time.Time{})
				waitShown = false
			}
		case o := <-results:
			inflight--
			if o.task.initial {
				initial--
			}
			switch {
			case o.serviceOK:
				failures, throttled = 0, 0
			case o.failure:
				failures++
			case o.throttled:
				throttled++
			}
			if o.pause.After(pauseUntil) {
				pauseUntil = o.pause
			}
			if o.next != nil {
				heap.Push(queue, *o.next)
			}
			if o.rowDone {
				done++
				if cfg.Progress != nil {
					cfg.Progress(done, total)
				}
			}
			switch {
			case o.fatal != nil:
				stop(o.fatal)
			case failures >= cfg.BreakerThreshold:
				stop(fmt.Errorf("the service failed %d times in a row: stopped sending", failures))
			case p.throttleBreaker > 0 && throttled >= p.throttleBreaker:
				stop(fmt.Errorf("%w: %d answers in a row were 429", errThrottled, throttled))
			}
		case <-wake:
		case <-ctxDone:
			ctxDone = nil
			stop(context.Cause(ctx)) // the signal that stopped the command, if one did
		}
	}
	if stopReason != nil {
		p.log.Warn("run stopped; rerun to resume", "reason", stopReason.Error())
		return fmt.Errorf("%w: %w", ErrAborted, stopReason)
	}
	return nil
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
	if !until.After(said) {
		return said
	}
	wait := until.Sub(now).Round(time.Second)
	p.log.Warn(fmt.Sprintf("waiting for the unknown-outcome grace: %d payouts whose outcome is unknown were not found by external_invoice_ref; they are looked up again until %s (%s from now) before any is sent again",
		n, until.Format(time.TimeOnly), wait), "payouts", n, "until", until, "wait", wait.String())
	if p.cfg.Waiting != nil {
		p.cfg.Waiting(n, until)
	}
	return until
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
