package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/payout/payout/ledger"
)

// writers is how many goroutines write at once in the concurrency tests.
const writers = 8

// testConcurrentWriters: goroutines of one handle move payouts at once, each change in a call of
// its own, and race for the same payout: exactly one of the racers wins, and the chain stays one
// line that verifies.
func testConcurrentWriters(t *testing.T, e Engine) {
	l := e.New(t)
	ps := seed(t, l, "r1", 40)
	hammer(t, []ledger.Ledger{l}, ps)
	rep := intact(t, l)
	// Each payout: recorded, SUBMITTING, SUBMITTED, SUCCEEDED; and the run's row events.
	if rep.Events != 1+4*len(ps) || rep.Payouts != len(ps) {
		t.Errorf("verify counted %d events of %d payouts, want %d of %d", rep.Events, rep.Payouts, 1+4*len(ps), len(ps))
	}
}

// testTwoHandles: two handles on one ledger (two processes, as a run and the callback receiver
// are) write at once; the chain has one head and verifies from either.
func testTwoHandles(t *testing.T, e Engine) {
	if e.Again == nil {
		t.Skip("the engine opens no second handle")
	}
	l := e.New(t)
	other := e.Again(t, l)
	ps := seed(t, l, "r1", 40)
	hammer(t, []ledger.Ledger{l, other}, ps)
	a, b := intact(t, l), intact(t, other)
	if a.Head != b.Head || a.Events != 1+4*len(ps) {
		t.Errorf("heads %v and %v, %d events: want one head over %d", a.Head, b.Head, a.Events, 1+4*len(ps))
	}
	for _, h := range []ledger.Ledger{l, other} {
		head, err := h.ChainHead(context.Background())
		must(t, err)
		if head != a.Head {
			t.Errorf("ChainHead %v, verify's head %v", head, a.Head)
		}
	}
}

// hammer takes every payout of ps from READY to SUCCEEDED through handles, from writers
// goroutines at once. Two goroutines try each move: one must win and the other get
// ErrStateConflict, so that a lost update would show as two winners.
func hammer(t *testing.T, handles []ledger.Ledger, ps []ledger.Payout) {
	t.Helper()
	ctx := context.Background()
	steps := [][2]ledger.State{{ledger.Ready, ledger.Submitting}, {ledger.Submitting, ledger.Submitted}, {ledger.Submitted, ledger.Succeeded}}
	var (
		mu   sync.Mutex
		wins = make(map[string]int)
		wg   sync.WaitGroup
		work = make(chan int)
	)
	for w := range writers {
		h := handles[w%len(handles)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				p, step := ps[i/2], steps[0]
				for _, step = range steps {
					err := h.Apply(ctx, ledger.Change{Ref: p.Ref, From: step[0], To: step[1], RunID: "r1",
						InvoiceNo: "INV-" + p.Ref, CountAttempt: step[1] == ledger.Submitting})
					if errors.Is(err, ledger.ErrStateConflict) {
						continue // the other racer made this move
					}
					if err != nil {
						t.Errorf("%s %s -> %s: %v", p.Ref, step[0], step[1], err)
						return
					}
					mu.Lock()
					wins[fmt.Sprintf("%s %s", p.Ref, step[1])]++
					mu.Unlock()
				}
			}
		}()
	}
	for i := range 2 * len(ps) {
		work <- i
	}
	close(work)
	wg.Wait()
	for _, p := range ps {
		for _, step := range steps {
			if n := wins[fmt.Sprintf("%s %s", p.Ref, step[1])]; n != 1 {
				t.Errorf("%s -> %s applied %d times, want once", p.Ref, step[1], n)
			}
		}
		if got := mustGet(t, handles[0], p.Ref); got.State != ledger.Succeeded || got.Attempts != 1 {
			t.Errorf("%s: %s after %d attempts, want SUCCEEDED after 1", p.Ref, got.State, got.Attempts)
		}
	}
}

// testMixedWriters: every kind of write at once, from two handles when the engine opens them:
// moves, a second run recording its payouts, callbacks, approvals and runs ending; each reads the
// chain's head inside its own write, so the chain stays one line.
func testMixedWriters(t *testing.T, e Engine) {
	l := e.New(t)
	other := l
	if e.Again != nil {
		other = e.Again(t, l)
	}
	ctx := context.Background()
	ps := seed(t, l, "r1", 20)
	addRun(t, other, "r2", 1)
	const n = 20
	var wg sync.WaitGroup
	run := func(name string, f func(i int) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				if err := f(i); err != nil {
					t.Errorf("%s %d: %v", name, i, err)
					return
				}
			}
		}()
	}
	run("move", func(i int) error {
		return l.Apply(ctx, ledger.Change{Ref: ps[i].Ref, From: ledger.Ready, To: ledger.Submitting, CountAttempt: true})
	})
	run("record", func(i int) error {
		p := payout(fmt.Sprintf("r2-%d", i), "1.00", i+2)
		return other.Record(ctx, "r2", []ledger.RunRow{rowOf(p)}, []ledger.Payout{p})
	})
	run("callback", func(i int) error {
		return other.StoreCallback(ctx, ledger.StoredCallback{InvoiceNo: fmt.Sprintf("INV-%d", i), Verdict: "unknown-invoice", Payload: "{}"})
	})
	run("approval", func(i int) error {
		_, err := l.AppendLedgerEvents(ctx, ledger.LedgerEvent{RunID: "r1", Kind: ledger.EventApproved, Detail: fmt.Sprintf("approval %d", i)})
		return err
	})
	run("run", func(i int) error {
		id := fmt.Sprintf("side-%d", i)
		if err := other.AddRun(ctx, ledger.Run{ID: id, Kind: "reconcile", StartedAt: t0, Status: "running"}); err != nil {
			return err
		}
		return other.FinishRun(ctx, id, "finished", 0, t0.Add(time.Minute))
	})
	wg.Wait()
	a := intact(t, l)
	// r1's payouts: recorded and moved; r2's: recorded; the approvals.
	if want := 1 + 2*len(ps) + n + n; a.Events != want || a.Payouts != len(ps)+n {
		t.Errorf("verify counted %d events of %d payouts, want %d of %d", a.Events, a.Payouts, want, len(ps)+n)
	}
	if b := intact(t, other); b.Head != a.Head {
		t.Errorf("two heads: %v and %v", a.Head, b.Head)
	}
}
