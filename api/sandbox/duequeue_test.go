package sandbox

import (
	"testing"
	"time"
)

// TestDueQueuePopsInCreationOrder: what is due together comes out in the order it was created,
// as the callbacks of one settling are sent, whatever the order of the due times.
func TestDueQueuePopsInCreationOrder(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	var q dueQueue
	dues := []time.Duration{5, 1, 3, 1, 9, 2} // minutes after t0, by creation order
	for i, d := range dues {
		q.add(&Record{InvoiceNo: string(rune('A' + i))}, t0.Add(d*time.Minute), i+1)
	}
	var got string
	for _, p := range q.popDue(t0.Add(3 * time.Minute)) {
		got += p.rec.InvoiceNo
	}
	if got != "BCDF" {
		t.Errorf("due by minute 3: %q, want BCDF", got)
	}
	if q.Len() != 2 {
		t.Errorf("%d left pending, want 2", q.Len())
	}
	if p := q.popDue(t0.Add(4 * time.Minute)); len(p) != 0 {
		t.Errorf("due by minute 4: %d, want none", len(p))
	}
}
