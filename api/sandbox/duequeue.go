package sandbox

import (
	"cmp"
	"container/heap"
	"slices"
	"time"
)

// duePayout is a PENDING record with the time it settles and its place in creation order.
type duePayout struct {
	rec     *Record
	due     time.Time
	created int // creation order, so that payouts due together settle in the order they were made
}

// dueQueue holds the PENDING records as a heap, the first due on top, so that settling costs
// what becomes due rather than what is pending.
type dueQueue []duePayout

var _ heap.Interface = (*dueQueue)(nil)

func (q dueQueue) Len() int { return len(q) }

func (q dueQueue) Less(i, j int) bool {
	if q[i].due.Equal(q[j].due) {
		return q[i].created < q[j].created
	}
	return q[i].due.Before(q[j].due)
}

func (q dueQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }

func (q *dueQueue) Push(x any) { *q = append(*q, x.(duePayout)) }

func (q *dueQueue) Pop() any {
	old := *q
	last := old[len(old)-1]
	old[len(old)-1] = duePayout{} // the record is no longer held once it settles
	*q = old[:len(old)-1]
	return last
}

// add queues a record created as the created-th payout to settle at due.
func (q *dueQueue) add(rec *Record, due time.Time, created int) {
	heap.Push(q, duePayout{rec: rec, due: due, created: created})
}

// popDue removes and returns every record whose due time is not after now, in creation order.
func (q *dueQueue) popDue(now time.Time) []duePayout {
	var out []duePayout
	for q.Len() > 0 && !now.Before((*q)[0].due) {
		out = append(out, heap.Pop(q).(duePayout))
	}
	slices.SortFunc(out, func(a, b duePayout) int { return cmp.Compare(a.created, b.created) })
	return out
}
