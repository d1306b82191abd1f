package pool

import (
	"container/heap"
	"context"
	"fmt"
	"time"
)

// state is what one Pool.Run keeps between events.
type state[T Task] struct {
	p           *Pool[T]
	queue       queue[T]
	first       int // First tasks not yet answered: tasks that Wait wait for them
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
func (st *state[T]) due(now time.Time) (T, time.Duration, bool) {
	var none T
	if st.queue.Len() == 0 {
		return none, 0, false
	}
	head := st.queue[0]
	// Unknown outcomes are looked up once before anything new goes out.
	if head.Waits() && st.first > 0 {
		return none, 0, false
	}
	at := head.Due()
	// A 429's Retry-After holds every request back, lookups too: the service said so.
	if st.pauseUntil.After(at) {
		at = st.pauseUntil
	}
	if at.After(now) {
		return none, at.Sub(now), false
	}
	return head, 0, true
}

// take takes a chunk from the feed, and reports false when the feed is closed.
func (st *state[T]) take(b Feed[T], ok bool) bool {
	switch {
	case !ok:
		return false
	case b.Err != nil:
		st.stop(b.Err)
	default:
		st.push(b.Tasks)
		st.settleDone(b.Done)
	}
	return true
}

func (st *state[T]) push(tasks []T) {
	for _, t := range tasks {
		heap.Push(&st.queue, t)
		if t.First() {
			st.first++
		}
	}
}

// settleDone counts the rows of a chunk just taken that needed nothing more, and shows progress.
func (st *state[T]) settleDone(n int) {
	st.done += n
	if cfg := st.p.cfg; cfg.Progress != nil {
		cfg.Progress(st.done, st.total)
	}
}

// settle takes a worker's result: its follow-up, the breakers, the progress.
func (st *state[T]) settle(o Result[T]) {
	cfg := st.p.cfg
	st.inflight--
	if o.Task.First() {
		st.first--
	}
	switch {
	case o.ServiceOK:
		st.failures, st.throttled = 0, 0
	case o.Failure:
		st.failures++
	case o.Throttled:
		st.throttled++
	}
	if o.Pause.After(st.pauseUntil) {
		st.pauseUntil = o.Pause
	}
	if o.Next != nil {
		heap.Push(&st.queue, *o.Next)
	}
	if o.RowDone {
		st.done++
		if cfg.Progress != nil {
			cfg.Progress(st.done, st.total)
		}
	}
	switch {
	case o.Fatal != nil:
		st.stop(o.Fatal)
	case st.failures >= cfg.BreakerThreshold:
		st.stop(fmt.Errorf("the service failed %d times in a row: stopped sending", st.failures))
	case cfg.ThrottleBreaker > 0 && st.throttled >= cfg.ThrottleBreaker:
		st.stop(fmt.Errorf("%w: %d answers in a row were 429", ErrThrottled, st.throttled))
	}
}

// heedStop takes a stop the context asks for while rows are left, before anything more is
// handed out or taken in (select chooses at random among its ready cases: a run could otherwise
// drain after its stop and end as if it had finished), and empties the queue of a stopping run.
func (st *state[T]) heedStop(ctx context.Context) {
	if !st.stopping && ctx.Err() != nil && st.done < st.total {
		st.stop(context.Cause(ctx)) // the signal that stopped the command, if one did
	}
	if st.stopping {
		// Tasks not yet handed out are dropped: their rows stay as they are, for a rerun.
		st.queue = st.queue[:0]
	}
}

// stop ends handing out tasks; the first reason is the one reported.
func (st *state[T]) stop(reason error) {
	if st.stopReason == nil {
		st.stopReason = reason
	}
	st.stopping = true
}

// queue is a min-heap of tasks: First tasks first, whatever their due time (tasks that Wait
// wait for them), then by due time.
type queue[T Task] []T

func (q queue[T]) Len() int { return len(q) }
func (q queue[T]) Less(i, j int) bool {
	if q[i].First() != q[j].First() {
		return q[i].First()
	}
	return q[i].Due().Before(q[j].Due())
}
func (q queue[T]) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue[T]) Push(x any)   { *q = append(*q, x.(T)) }
func (q *queue[T]) Pop() any {
	old := *q
	t := old[len(old)-1]
	*q = old[:len(old)-1]
	return t
}
