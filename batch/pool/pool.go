package pool

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"golang.org/x/time/rate"

	"github.com/payout/payout/batch/words"
)

// ErrAborted wraps the reason a pool stopped before every task was dealt with.
var ErrAborted = errors.New("run aborted")

// ErrThrottled stops a pool whose service answers nothing but 429.
var ErrThrottled = errors.New("the service is throttling (HTTP 429)")

// Limiter paces the requests to the service: every task waits on it. A *rate.Limiter is one; a
// limiter shared by several processes can stand in for it.
type Limiter interface {
	// Wait blocks until a request may go, or returns ctx's error (or the limiter's, when ctx's
	// deadline would pass first, or when it cannot pace the request: that stops the pool).
	Wait(ctx context.Context) error
	// Limit is the most requests a second; rate.Inf for none.
	Limit() rate.Limit
}

var _ Limiter = (*rate.Limiter)(nil)

// Pauser is a Limiter that can hold back every request it paces, wherever it is paced: a
// limiter shared by several processes. The pool tells it of each 429's Retry-After, as well as
// pausing itself.
type Pauser interface {
	// Pause holds every Wait back until at least d from now.
	Pause(ctx context.Context, d time.Duration) error
}

// Task is what the pool needs to know of a task to schedule it.
type Task interface {
	Due() time.Time // not before
	// First tasks (the lookups of unknown outcomes) go before any task that Waits (a send),
	// whatever their due times, and those wait until every First task is answered.
	First() bool
	Waits() bool
	// GraceEnd, when not zero, is when the grace this task waits out is over: a pool with
	// nothing else to do says so.
	GraceEnd() time.Time
}

// stopKey is the context value under which a handler finds the pool's own context (Stopping).
type stopKey struct{}

// Stopping is the context of the pool that handles a task, whose handler's own context is never
// cancelled: it ends when the pool is being stopped (a signal). A handler waits on it only where
// nothing has been sent yet (a SelfPaced task's turn); elsewhere it is ctx itself.
func Stopping(ctx context.Context) context.Context {
	if stop, ok := ctx.Value(stopKey{}).(context.Context); ok {
		return stop
	}
	return ctx
}

// SelfPaced is a Task whose handler takes its own turn of the Limiter (TakeTurn), right before
// its request, rather than the pool's turn before the handler starts: a send records its intent
// first, and a turn taken before that commit would be spent when the commit ends, however long
// it waited, bunched with the turns of every other commit that waited as long.
type SelfPaced interface {
	SelfPaced() bool
}

// Result is what a handler reports of one task.
type Result[T Task] struct {
	Task      T
	Next      *T            // a follow-up, if any
	ServiceOK bool          // the service answered something
	Failure   bool          // the service did not answer: counts towards the circuit breaker
	Throttled bool          // the service answered 429
	Pause     time.Time     // a 429: nothing goes before this
	Fatal     error         // stop the pool
	RowDone   bool          // nothing more will happen to this task's row
	Took      time.Duration // set by the pool: the time the handler took (0: nothing was sent)
}

// Feed is a chunk of work handed to a running pool: its tasks, how many of its rows need
// nothing more, or why no more will come.
type Feed[T Task] struct {
	Tasks []T
	Done  int
	Err   error
}

// Config is how a pool runs.
type Config struct {
	Limiter Limiter
	// Workers is the number of concurrent tasks; 0 sizes the pool from the rate and the
	// handler's observed latency (AutoStartWorkers up to AutoMaxWorkers).
	Workers int
	// BreakerThreshold failures in a row stop the pool; ThrottleBreaker 429s in a row with no
	// other answer between them, when above zero, too (ErrThrottled).
	BreakerThreshold, ThrottleBreaker int
	Clock                             Clock          // WallClock(nil) when nil
	Logger                            *slog.Logger   // discarded when nil
	Zone                              *time.Location // the operator's, for the times the log shows
	// Progress, when set, is called as rows reach an answer (done of total); Waiting, when
	// the pool has nothing to do but wait for a grace to end (n tasks, until), and with 0 once
	// it works again.
	Progress func(done, total int)
	Waiting  func(n int, until time.Time)
}

// Pool runs tasks of type T through Config.Workers workers at Config.Limiter's rate, each when
// due: a 429's Pause holds every task back, First tasks go before any that Waits,
// BreakerThreshold failures in a row stop it, and so does the context (a signal).
type Pool[T Task] struct {
	cfg Config
	log *slog.Logger
	// handle does one task and records its outcome before it returns. Its context is never
	// cancelled: once a request may have been sent, its answer is recorded.
	handle func(ctx context.Context, t T) Result[T]
}

// New is a pool of cfg that handles each task with handle.
func New[T Task](cfg Config, handle func(ctx context.Context, t T) Result[T]) *Pool[T] {
	if cfg.Clock == nil {
		cfg.Clock = WallClock(nil)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Pool[T]{cfg: cfg, log: cfg.Logger, handle: handle}
}

// do waits for the rate limiter and runs one task, unless the pool is being stopped: then
// nothing is sent, and the row stays as it is.
//
// A limiter that fails (a shared one whose database does not answer) stops the pool: a request
// it did not pace must not go, and a rerun resumes.
func (p *Pool[T]) do(ctx context.Context, t T) Result[T] {
	var err error
	if sp, ok := any(t).(SelfPaced); !ok || !sp.SelfPaced() {
		err = p.cfg.Limiter.Wait(ctx)
	}
	if ctx.Err() != nil {
		return Result[T]{Task: t}
	}
	if err != nil {
		return Result[T]{Task: t, Fatal: fmt.Errorf("the rate limiter: %w", err)}
	}
	start := p.cfg.Clock.Now()
	o := p.handle(context.WithValue(context.WithoutCancel(ctx), stopKey{}, ctx), t)
	end := p.cfg.Clock.Now()
	o.Took = end.Sub(start)
	if pauser, ok := p.cfg.Limiter.(Pauser); ok && o.Throttled && o.Pause.After(end) {
		// Every other process paying for the merchant waits too; this pool pauses itself as well.
		if err := pauser.Pause(context.WithoutCancel(ctx), o.Pause.Sub(end)); err != nil && o.Fatal == nil {
			o.Fatal = fmt.Errorf("the rate limiter, pausing for a 429: %w", err)
		}
	}
	return o
}

// Run hands due tasks to the workers until none is left and feed, when not nil, is closed; or
// the context ends, or the pool must stop. A worker takes one task at a time and reports its
// result only once everything the task sent is recorded. done of total rows are dealt with
// before it starts. More tasks come from feed while the queue runs low, so that work of any
// size is held a chunk or two at a time. It returns an error wrapping ErrAborted when it
// stopped before every row was dealt with.
func (p *Pool[T]) Run(ctx context.Context, tasks []T, done, total int, feed <-chan Feed[T]) error {
	st := &state[T]{p: p, done: done, total: total, size: newSizer(p.cfg, p.log)}
	st.push(tasks)
	work := make(chan T)
	results := make(chan Result[T])
	workers := p.startWorkers(ctx, work, results, st.size.workers)
	defer workers.stop()
	timer := dueTimer{clock: p.cfg.Clock}
	defer timer.stop()
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
		var more <-chan Feed[T]
		if feed != nil && !st.stopping && st.queue.Len() < 2*max(st.size.workers, st.size.max) {
			more = feed
		}
		var (
			out  chan T
			wake <-chan time.Time
		)
		now := p.cfg.Clock.Now()
		next, wait, ready := st.due(now)
		switch {
		case ready:
			out = work
		case wait > 0:
			wake = timer.after(wait)
			if head := st.queue[0]; st.inflight == 0 && !head.GraceEnd().IsZero() {
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
			workers.add(st.size.observe(o.Took))
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

// dueTimer wakes the pool when its next task is due. It is made at the first wait and set only
// while the pool waits, so that a fake clock moves to no other time (one whose timers end as
// they are set would move to a timer's time as it is made).
type dueTimer struct {
	clock Clock
	t     Timer
}

// after sets the timer to fire wait from now and returns its channel.
func (d *dueTimer) after(wait time.Duration) <-chan time.Time {
	if d.t == nil {
		d.t = d.clock.NewTimer(wait)
	} else {
		d.t.Reset(wait)
	}
	return d.t.C()
}

func (d *dueTimer) stop() {
	if d.t != nil {
		d.t.Stop()
	}
}

// announceGrace says, once per grace end, what an idle pool waits for: tasks reported not
// found are looked up again, spaced out, until their grace is over, and only then may be sent
// again. A run that stood still at its last rows without a word looked hung.
func (p *Pool[T]) announceGrace(queue queue[T], now, said time.Time) time.Time {
	n := 0
	var until time.Time
	for _, t := range queue {
		if end := t.GraceEnd(); !end.IsZero() {
			n++
			if end.After(until) {
				until = end
			}
		}
	}
	if !until.After(said) || !until.After(now) {
		return said // said already, or over already: nothing to wait for
	}
	wait := secondsUntil(now, until)
	p.log.Warn(fmt.Sprintf("waiting for the unknown-outcome grace: %d payouts whose outcome is unknown were not found by external_invoice_ref; they are looked up again until %s (%s from now) before any is sent again",
		n, words.FormatClock(until, p.cfg.Zone), wait), "payouts", n, "until", until, "wait", wait.String())
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
