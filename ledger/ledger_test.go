package ledger_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/ledger"
	"github.com/payout/payout/ledger/ledgertest"
)

func TestOpenSetsPragmasOnEveryPooledConnection(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t)
	ctx := context.Background()
	pool := ledger.SQLOf(db)
	// Hold several connections at once so that the pool must open new ones.
	var conns []*sql.Conn
	for range 4 {
		c, err := pool.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for i, c := range conns {
		var sync, fk, busy, cells int
		var mode string
		if err := c.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA cell_size_check").Scan(&cells); err != nil {
			t.Fatal(err)
		}
		if sync != 2 || mode != "wal" || fk != 1 || busy <= 0 || cells != 1 {
			t.Errorf("connection %d: synchronous=%d journal_mode=%s foreign_keys=%d busy_timeout=%d cell_size_check=%d", i, sync, mode, fk, busy, cells)
		}
		c.Close()
	}
}

func TestOpenRejectsUnusableName(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a?b.db")
	if db, err := ledger.Create(context.Background(), path, ledger.Options{}); err == nil {
		db.Close()
		t.Fatal("a name with '?' would lose the DSN options; Create accepted it")
	}
	if db, err := ledger.Open(context.Background(), path, ledger.Options{}); err == nil {
		db.Close()
		t.Fatal("a name with '?' would lose the DSN options; Open accepted it")
	}
}

func TestReopenKeepsDataAndSchema(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ledger.db")
	ctx := context.Background()
	db, err := ledger.Create(ctx, path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ps := seed(t, db, "r1", 3)
	if err := db.Apply(ctx, ledger.Change{Ref: ps[0].Ref, From: ledger.Ready, To: ledger.Submitting, CountAttempt: true}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 { // migrations run again at every open and must do nothing
		db = openAt(t, path)
		v, err := db.SchemaVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v != ledger.Migrations() {
			t.Errorf("schema version %d, want %d", v, ledger.Migrations())
		}
		if p := mustGet(t, db, ps[0].Ref); p.State != ledger.Submitting || p.Attempts != 1 {
			t.Errorf("after reopen: state %s attempts %d, want SUBMITTING 1", p.State, p.Attempts)
		}
		if n := len(mustEvents(t, db, ps[0].Ref)); n != 2 {
			t.Errorf("after reopen: %d events, want 2", n)
		}
		db.Close()
	}
}

func TestRecord(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t)
	ctx := context.Background()
	ps := seed(t, db, "r1", 3)

	got := mustGet(t, db, ps[1].Ref)
	if got.State != ledger.Ready || got.RunID != "r1" || got.Line != 3 || !got.SameDetails(ps[1]) || got.Amount.String() != "10" {
		t.Errorf("recorded payout %+v", got)
	}
	var text string
	if err := ledger.SQLOf(db).QueryRow(`SELECT amount FROM payouts WHERE ref = ?`, ps[1].Ref).Scan(&text); err != nil || text != "10.00" {
		t.Errorf("stored amount %q, %v: want the exact text 10.00", text, err)
	}
	evs := mustEvents(t, db, ps[1].Ref)
	if len(evs) != 1 || evs[0].From != "" || evs[0].To != ledger.Ready || evs[0].Detail != "recorded from r1.csv line 3" || evs[0].RunID != "r1" {
		t.Errorf("events %+v", evs)
	}
	rows, err := db.RunRows(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].Line != 2 || rows[2].Ref != ps[2].Ref || rows[0].Amount != "10" {
		t.Errorf("run rows %+v", rows)
	}

	if err := db.AddRun(ctx, ledger.Run{ID: "r2", Kind: "run", File: "again.csv", StartedAt: time.Now(), Status: "running"}); err != nil {
		t.Fatal(err)
	}
	t.Run("same details again is a no-op", func(t *testing.T) {
		same := ps[0]
		same.Line = 9
		if err := db.Record(ctx, "r2", []ledger.RunRow{rowOf(same)}, []ledger.Payout{same}); err != nil {
			t.Fatal(err)
		}
		if p := mustGet(t, db, same.Ref); p.RunID != "r1" || p.Line != 2 {
			t.Errorf("payout rewritten: %+v", p)
		}
		if n := len(mustEvents(t, db, same.Ref)); n != 1 {
			t.Errorf("%d events, want 1", n)
		}
	})
	t.Run("other details are a conflict and nothing is stored", func(t *testing.T) {
		if err := db.AddRun(ctx, ledger.Run{ID: "r3", Kind: "run", File: "other.csv", StartedAt: time.Now(), Status: "running"}); err != nil {
			t.Fatal(err)
		}
		other := ps[2]
		other.Amount = decimal.RequireFromString("10.01")
		fresh := payout("r3-new", "5", 2)
		err := db.Record(ctx, "r3", []ledger.RunRow{rowOf(fresh), rowOf(other)}, []ledger.Payout{fresh, other})
		if !errors.Is(err, ledger.ErrStateConflict) || !strings.Contains(err.Error(), "payout "+other.Ref+":") {
			t.Fatalf("err %v, want a conflict naming %s", err, other.Ref)
		}
		if _, err := db.Get(ctx, fresh.Ref); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("fresh payout of the refused call: err %v, want ErrNotFound", err)
		}
		if rows, err := db.RunRows(ctx, "r3"); err != nil || len(rows) != 0 {
			t.Errorf("run rows of the refused call: %d, %v", len(rows), err)
		}
		if p := mustGet(t, db, other.Ref); !p.Amount.Equal(decimal.RequireFromString("10")) {
			t.Errorf("amount overwritten: %s", p.Amount)
		}
	})
	t.Run("an unknown run is not found", func(t *testing.T) {
		if err := db.Record(ctx, "nope", nil, nil); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("err %v, want ErrNotFound", err)
		}
	})
}

// TestRecordChunks records more rows than one INSERT carries, with a reference repeated inside a
// chunk and references already stored in later chunks: each stored payout gets one event, the
// stored ones are left as they were, and a conflict in a late chunk stores nothing of the call.
func TestRecordChunks(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t)
	ctx := context.Background()
	old := seed(t, db, "r1", 3)
	if err := db.AddRun(ctx, ledger.Run{ID: "r2", Kind: "run", File: "big.csv", StartedAt: time.Now(), Status: "running"}); err != nil {
		t.Fatal(err)
	}
	var fresh []ledger.Payout
	for i := range 150 {
		fresh = append(fresh, payout(fmt.Sprintf("big-%03d", i), "1.50", i+2))
	}
	fresh = slices.Insert(fresh, 10, fresh[9]) // the same ref twice in the first chunk
	fresh = slices.Insert(fresh, 100, old[1])  // stored by r1, in the second chunk
	fresh = append(fresh, old[2], fresh[3])    // stored by r1, and a ref of the first chunk, in the third
	rows := make([]ledger.RunRow, len(fresh))
	for i, p := range fresh {
		rows[i] = rowOf(p)
		rows[i].Line = i + 2
	}
	if err := db.Record(ctx, "r2", rows, fresh); err != nil {
		t.Fatal(err)
	}
	got, err := db.RunRows(ctx, "r2")
	if err != nil || len(got) != len(rows) {
		t.Fatalf("%d run rows, %v; want %d", len(got), err, len(rows))
	}
	for _, p := range []ledger.Payout{fresh[0], fresh[9], fresh[64], fresh[151]} {
		if evs := mustEvents(t, db, p.Ref); len(evs) != 1 || evs[0].To != ledger.Ready {
			t.Errorf("%s: events %+v, want one READY", p.Ref, evs)
		}
	}
	if p := mustGet(t, db, "big-009"); p.RunID != "r2" || p.Line != 11 {
		t.Errorf("repeated ref stored from run %s line %d, want r2 line 11", p.RunID, p.Line)
	}
	if evs := mustEvents(t, db, old[1].Ref); len(evs) != 1 || evs[0].RunID != "r1" {
		t.Errorf("stored ref: events %+v, want only r1's", evs)
	}
	if evs := mustEvents(t, db, "big-149"); len(evs) != 1 || evs[0].Detail != "recorded from big.csv line 151" {
		t.Errorf("last fresh ref: events %+v", evs)
	}

	if err := db.AddRun(ctx, ledger.Run{ID: "r3", Kind: "run", File: "late.csv", StartedAt: time.Now(), Status: "running"}); err != nil {
		t.Fatal(err)
	}
	var late []ledger.Payout
	for i := range 140 {
		late = append(late, payout(fmt.Sprintf("late-%03d", i), "2", i+2))
	}
	clash := old[0]
	clash.Account = "9999999999"
	late = append(late, clash)
	err = db.Record(ctx, "r3", nil, late)
	if !errors.Is(err, ledger.ErrStateConflict) || !strings.Contains(err.Error(), clash.Ref) {
		t.Fatalf("err %v, want a conflict naming %s", err, clash.Ref)
	}
	if _, err := db.Get(ctx, "late-000"); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("a payout of the refused call was stored: err %v", err)
	}
}

func TestRecordLargeFile(t *testing.T) {
	t.Parallel() // long, on a ledger of its own: beside the other long ones
	n := 100_000
	if raceEnabled || testing.Short() {
		n = 1_000 // still sixteen of Record's insert chunks, looked up in one list
	}
	db, _ := mustOpen(t)
	ps := seed(t, db, "big", n)
	refs := make([]string, 0, n+1)
	for _, p := range ps {
		refs = append(refs, p.Ref)
	}
	// A reference the ledger lacks, and one the list names twice, as a file's duplicates do.
	refs = append(refs, "absent", ps[0].Ref)
	got, err := db.Lookup(context.Background(), refs, ledger.WholePayouts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Errorf("lookup found %d of %d", len(got), n)
	}
	if p, ok := got[ps[n-1].Ref]; !ok || p.Line != n+1 {
		t.Errorf("last payout %+v", p)
	}
	details, err := db.Lookup(context.Background(), refs, ledger.CheckFields)
	if err != nil {
		t.Fatal(err)
	}
	if len(details) != n {
		t.Errorf("details found %d of %d", len(details), n)
	}
	for ref, p := range got {
		d := details[ref]
		if d.Ref != p.Ref || d.RunID != p.RunID || d.Line != p.Line || !d.SameDetails(p) || d.State != p.State {
			t.Fatalf("details of %s: %+v, want those of %+v", ref, d, p)
		}
	}
}

func TestApplyStateMachine(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t)
	ctx := context.Background()
	ps := seed(t, db, "r1", 1)
	ref := ps[0].Ref
	steps := []struct {
		name   string
		change ledger.Change
		check  func(t *testing.T, p ledger.Payout)
	}{
		{"intent counts an attempt", ledger.Change{From: ledger.Ready, To: ledger.Submitting, CountAttempt: true, Detail: "about to POST"},
			func(t *testing.T, p ledger.Payout) {
				if p.Attempts != 1 {
					t.Errorf("attempts %d", p.Attempts)
				}
			}},
		{"unknown outcome keeps the error", ledger.Change{From: ledger.Submitting, To: ledger.Unknown, Error: "timeout"},
			func(t *testing.T, p ledger.Payout) {
				if p.LastError != "timeout" {
					t.Errorf("last error %q", p.LastError)
				}
			}},
		{"first not found sets the time", ledger.Change{From: ledger.Unknown, To: ledger.Unknown, CountNotFound: true},
			func(t *testing.T, p ledger.Payout) {
				if p.NotFoundCount != 1 || p.FirstNotFoundAt.IsZero() {
					t.Errorf("not found %d at %v", p.NotFoundCount, p.FirstNotFoundAt)
				}
			}},
		{"second not found keeps the first time", ledger.Change{From: ledger.Unknown, To: ledger.Unknown, CountNotFound: true},
			func(t *testing.T, p ledger.Payout) {
				if p.NotFoundCount != 2 || !p.FirstNotFoundAt.Before(p.UpdatedAt) {
					t.Errorf("not found %d at %v (updated %v)", p.NotFoundCount, p.FirstNotFoundAt, p.UpdatedAt)
				}
			}},
		{"a not found that starts a new count restarts the time", ledger.Change{From: ledger.Unknown, To: ledger.Unknown, CountNotFound: true, ResetNotFound: true},
			func(t *testing.T, p ledger.Payout) {
				if p.NotFoundCount != 1 || !p.FirstNotFoundAt.Equal(p.UpdatedAt) {
					t.Errorf("not found %d at %v (updated %v)", p.NotFoundCount, p.FirstNotFoundAt, p.UpdatedAt)
				}
			}},
		{"found resets and sets the invoice", ledger.Change{From: ledger.Unknown, To: ledger.Submitted, ResetNotFound: true, InvoiceNo: "INV-1", TransactionStatus: "PENDING"},
			func(t *testing.T, p ledger.Payout) {
				if p.NotFoundCount != 0 || !p.FirstNotFoundAt.IsZero() || p.InvoiceNo != "INV-1" || p.TransactionStatus != "PENDING" {
					t.Errorf("%+v", p)
				}
				if p.LastError != "timeout" {
					t.Errorf("an empty Error erased the last error: %q", p.LastError)
				}
			}},
		{"callback settles it, empty fields keep their value", ledger.Change{From: ledger.Submitted, To: ledger.Succeeded, TransactionStatus: "SUCCESS", BankReferenceNo: "BR9", Payload: `{"a":1}`},
			func(t *testing.T, p ledger.Payout) {
				if p.State != ledger.Succeeded || p.InvoiceNo != "INV-1" || p.BankReferenceNo != "BR9" || p.Attempts != 1 {
					t.Errorf("%+v", p)
				}
			}},
	}
	for i, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			c := s.change
			c.Ref, c.RunID = ref, "r1"
			if err := db.Apply(ctx, c); err != nil {
				t.Fatal(err)
			}
			p := mustGet(t, db, ref)
			if p.State != c.To {
				t.Errorf("state %s, want %s", p.State, c.To)
			}
			s.check(t, p)
			evs := mustEvents(t, db, ref)
			if len(evs) != i+2 {
				t.Fatalf("%d events, want %d", len(evs), i+2)
			}
			if e := evs[len(evs)-1]; e.From != c.From || e.To != c.To || e.Detail != c.Detail || e.Payload != c.Payload || e.RunID != "r1" {
				t.Errorf("event %+v", e)
			}
		})
	}
	t.Run("a wrong From is refused", func(t *testing.T) {
		err := db.Apply(ctx, ledger.Change{Ref: ref, From: ledger.Ready, To: ledger.Submitting})
		want := fmt.Sprintf("payout %s: is %s, expected %s", ref, ledger.Succeeded, ledger.Ready)
		if !errors.Is(err, ledger.ErrStateConflict) || !strings.Contains(err.Error(), want) {
			t.Fatalf("err %v, want ErrStateConflict saying %q", err, want)
		}
		if n := len(mustEvents(t, db, ref)); n != len(steps)+1 {
			t.Errorf("a refused change left an event: %d", n)
		}
	})
	t.Run("an unknown ref is refused", func(t *testing.T) {
		err := db.Apply(ctx, ledger.Change{Ref: "nope", From: ledger.Ready, To: ledger.Submitting})
		if !errors.Is(err, ledger.ErrStateConflict) || !strings.Contains(err.Error(), "nope") {
			t.Errorf("err %v", err)
		}
	})
}

func TestApplyCallIsAtomic(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t)
	ctx := context.Background()
	ps := seed(t, db, "r1", 3)
	err := db.Apply(ctx,
		ledger.Change{Ref: ps[0].Ref, From: ledger.Ready, To: ledger.Submitting, CountAttempt: true},
		ledger.Change{Ref: ps[1].Ref, From: ledger.Ready, To: ledger.Submitting, CountAttempt: true},
		ledger.Change{Ref: ps[2].Ref, From: ledger.Submitted, To: ledger.Succeeded},
	)
	if !errors.Is(err, ledger.ErrStateConflict) || !strings.Contains(err.Error(), ps[2].Ref) {
		t.Fatalf("err %v, want a conflict naming %s", err, ps[2].Ref)
	}
	for _, p := range ps {
		if got := mustGet(t, db, p.Ref); got.State != ledger.Ready || got.Attempts != 0 {
			t.Errorf("%s: state %s attempts %d after a refused call", p.Ref, got.State, got.Attempts)
		}
		if n := len(mustEvents(t, db, p.Ref)); n != 1 {
			t.Errorf("%s: %d events after a refused call", p.Ref, n)
		}
	}
	// The same call without the bad change goes through whole.
	if err := db.Apply(ctx,
		ledger.Change{Ref: ps[0].Ref, From: ledger.Ready, To: ledger.Submitting},
		ledger.Change{Ref: ps[0].Ref, From: ledger.Submitting, To: ledger.Submitted},
		ledger.Change{Ref: ps[1].Ref, From: ledger.Ready, To: ledger.Submitting},
	); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, db, ps[0].Ref); got.State != ledger.Submitted {
		t.Errorf("state %s", got.State)
	}
}

func TestApplyConcurrentCallers(t *testing.T) {
	t.Parallel() // long, on a ledger of its own: beside the other long ones
	db, path := mustOpen(t)
	ctx := context.Background()
	const workers, perWorker = 32, 20
	ps := seed(t, db, "r1", workers*perWorker)
	var wg sync.WaitGroup
	errs := make(chan error, workers*perWorker*2+workers)
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				ref := ps[w*perWorker+i].Ref
				if err := db.Apply(ctx, ledger.Change{Ref: ref, From: ledger.Ready, To: ledger.Submitting, CountAttempt: true}); err != nil {
					errs <- err
				}
				if err := db.Apply(ctx, ledger.Change{Ref: ref, From: ledger.Submitting, To: ledger.Submitted, InvoiceNo: "INV-" + ref}); err != nil {
					errs <- err
				}
				// A stale change in the same batches must fail alone.
				if err := db.Apply(ctx, ledger.Change{Ref: ref, From: ledger.Ready, To: ledger.Submitting}); !errors.Is(err, ledger.ErrStateConflict) {
					errs <- fmt.Errorf("stale change of %s: %v", ref, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	db.Close()
	db = openAt(t, path)
	for _, p := range ps {
		found := ledgertest.Payouts(t, db, ledger.Filter{InvoiceNo: "INV-" + p.Ref})
		if len(found) != 1 || found[0].Ref != p.Ref || found[0].State != ledger.Submitted || found[0].Attempts != 1 {
			t.Errorf("%s: %+v", p.Ref, found)
			continue
		}
		evs := mustEvents(t, db, p.Ref)
		if len(evs) != 3 || evs[1].To != ledger.Submitting || evs[2].To != ledger.Submitted || evs[1].ID >= evs[2].ID {
			t.Errorf("%s: events %+v", p.Ref, evs)
		}
	}
}

// TestApplyRefusedCallsAmongOthers mixes, in the same group commits, calls of several changes
// that are refused at their last change with calls that are good: the writer first applies a
// batch without savepoints and, when such a call is refused, applies the batch again with them.
// Every good call must be recorded whole and every refused one not at all.
func TestApplyRefusedCallsAmongOthers(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t)
	ctx := context.Background()
	const workers, perWorker = 16, 10
	ps := seed(t, db, "r1", workers*perWorker*2)
	var wg sync.WaitGroup
	errs := make(chan error, workers*perWorker*2)
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				good, bad := ps[(w*perWorker+i)*2].Ref, ps[(w*perWorker+i)*2+1].Ref
				err := db.Apply(ctx, ledger.Change{Ref: bad, From: ledger.Ready, To: ledger.Submitting, CountAttempt: true},
					ledger.Change{Ref: bad, From: ledger.Submitted, To: ledger.Succeeded})
				if !errors.Is(err, ledger.ErrStateConflict) {
					errs <- fmt.Errorf("refused call for %s: %v", bad, err)
				}
				if err := db.Apply(ctx, ledger.Change{Ref: good, From: ledger.Ready, To: ledger.Submitting, CountAttempt: true},
					ledger.Change{Ref: good, From: ledger.Submitting, To: ledger.Submitted, InvoiceNo: "INV-" + good}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, p := range ps {
		got := mustGet(t, db, p.Ref)
		evs := mustEvents(t, db, p.Ref)
		if i%2 == 1 && (got.State != ledger.Ready || got.Attempts != 0 || len(evs) != 1) {
			t.Errorf("refused %s: state %s, attempts %d, %d events", p.Ref, got.State, got.Attempts, len(evs))
		}
		if i%2 == 0 && (got.State != ledger.Submitted || got.Attempts != 1 || len(evs) != 3) {
			t.Errorf("good %s: state %s, attempts %d, %d events", p.Ref, got.State, got.Attempts, len(evs))
		}
	}
}

func TestApplyContext(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t)
	ps := seed(t, db, "r1", 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := db.Apply(ctx, ledger.Change{Ref: ps[0].Ref, From: ledger.Ready, To: ledger.Submitting}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if p := mustGet(t, db, ps[0].Ref); p.State != ledger.Ready {
		t.Errorf("a cancelled call was recorded: %s", p.State)
	}
	db.Close()
	if err := db.Apply(context.Background(), ledger.Change{Ref: ps[0].Ref, From: ledger.Ready, To: ledger.Submitting}); !errors.Is(err, ledger.ErrClosed) {
		t.Errorf("after Close: err %v, want ErrClosed", err)
	}
}

func TestEventsAreAppendOnly(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t)
	seed(t, db, "r1", 1)
	pool := ledger.SQLOf(db)
	for _, q := range []string{`UPDATE events SET detail = 'forged'`, `DELETE FROM events`} {
		if _, err := pool.Exec(q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: err %v, want refused", q, err)
		}
	}
}

func TestQueries(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t)
	ctx := context.Background()
	r1 := seed(t, db, "r1", 2)
	r2 := seed(t, db, "r2", 2)
	if err := db.Apply(ctx, ledger.Change{Ref: r2[1].Ref, From: ledger.Ready, To: ledger.Submitting}); err != nil {
		t.Fatal(err)
	}
	t.Run("list everything by run then line", func(t *testing.T) {
		all := ledgertest.Payouts(t, db, ledger.Filter{})
		want := []string{r1[0].Ref, r1[1].Ref, r2[0].Ref, r2[1].Ref}
		if len(all) != len(want) {
			t.Fatalf("%d payouts", len(all))
		}
		for i, p := range all {
			if p.Ref != want[i] {
				t.Errorf("position %d: %s, want %s", i, p.Ref, want[i])
			}
		}
	})
	t.Run("list by state", func(t *testing.T) {
		got := ledgertest.Payouts(t, db, ledger.Filter{States: []ledger.State{ledger.Submitting, ledger.Unknown}})
		if len(got) != 1 || got[0].Ref != r2[1].Ref {
			t.Errorf("%+v", got)
		}
		got = ledgertest.Payouts(t, db, ledger.Filter{States: []ledger.State{ledger.Ready}})
		if len(got) != 3 || got[2].Ref != r2[0].Ref {
			t.Errorf("%+v", got)
		}
	})
	t.Run("list since excludes what was recorded before", func(t *testing.T) {
		got := ledgertest.Payouts(t, db, ledger.Filter{CreatedSince: mustGet(t, db, r2[0].Ref).CreatedAt})
		if len(got) != 2 || got[0].RunID != "r2" {
			t.Errorf("%+v", got)
		}
	})
	t.Run("not found", func(t *testing.T) {
		if _, err := db.Get(ctx, "nope"); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("Get: %v", err)
		}
		if _, err := db.GetRun(ctx, "nope"); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("GetRun: %v", err)
		}
		if err := db.FinishRun(ctx, "nope", "finished", 0, time.Now()); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("FinishRun: %v", err)
		}
	})
	t.Run("runs", func(t *testing.T) {
		ended := time.Date(2026, 11, 22, 9, 0, 0, 123, time.UTC)
		if err := db.FinishRun(ctx, "r1", "finished", 4, ended); err != nil {
			t.Fatal(err)
		}
		r, err := db.GetRun(ctx, "r1")
		if err != nil || r.Status != "finished" || r.ExitCode != 4 || !r.EndedAt.Equal(ended) || r.File != "r1.csv" {
			t.Errorf("%+v %v", r, err)
		}
		if err := db.AddRun(ctx, ledger.Run{ID: "r3", Kind: "run", File: "copy.csv", FileSHA256: "sha-r1", StartedAt: time.Now().Add(time.Hour), Status: "running"}); err != nil {
			t.Fatal(err)
		}
		runs, err := db.FindRuns(ctx, ledger.RunFilter{})
		if err != nil || len(runs) != 3 {
			t.Errorf("runs %+v %v", runs, err)
		}
	})
	t.Run("callbacks", func(t *testing.T) {
		if err := db.StoreCallback(ctx, ledger.StoredCallback{InvoiceNo: "INV-9", Verdict: "unknown-invoice", Payload: "{}"}); err != nil {
			t.Fatal(err)
		}
		var verdict, received string
		if err := ledger.SQLOf(db).QueryRow(`SELECT verdict, received_at FROM callbacks`).Scan(&verdict, &received); err != nil || verdict != "unknown-invoice" || received == "" {
			t.Errorf("stored callback: verdict %q received %q, %v", verdict, received, err)
		}
	})
}

func TestCountsAreExact(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t)
	ctx := context.Background()
	if err := db.AddRun(ctx, ledger.Run{ID: "r1", Kind: "run", StartedAt: time.Now(), Status: "running"}); err != nil {
		t.Fatal(err)
	}
	var ps []ledger.Payout
	ps = append(ps, payout("a", "0.1", 2), payout("b", "0.2", 3), payout("big", "99999999999999.99", 4))
	for i := range 1000 {
		ps = append(ps, payout(fmt.Sprintf("cent-%d", i), "0.01", 10+i))
	}
	if err := db.Record(ctx, "r1", nil, ps); err != nil {
		t.Fatal(err)
	}
	refused := []ledger.State{ledger.Submitting, ledger.Unknown, ledger.Failed}
	changes := append(walk("a", refused...), walk("b", refused...)...)
	changes = append(changes, walk("big", ledger.Submitting, ledger.Submitted, ledger.Succeeded)...)
	if err := db.Apply(ctx, changes...); err != nil {
		t.Fatal(err)
	}
	totals, err := db.Counts(ctx, ledger.CountRead{})
	if err != nil {
		t.Fatal(err)
	}
	counts := totals.States
	for _, c := range []struct {
		state ledger.State
		n     int
		sum   string
	}{{ledger.Failed, 2, "0.3"}, {ledger.Ready, 1000, "10"}, {ledger.Succeeded, 1, "99999999999999.99"}, {ledger.Unknown, 0, "0"}} {
		got := counts[c.state]
		if got.Count != c.n || !got.Amount.Equal(decimal.RequireFromString(c.sum)) {
			t.Errorf("%s: %d %s, want %d %s", c.state, got.Count, got.Amount, c.n, c.sum)
		}
	}
}

func TestOpenRefusesANewerSchema(t *testing.T) {
	t.Parallel()
	db, path := mustOpen(t)
	if _, err := ledger.SQLOf(db).Exec(`PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err := ledger.Open(context.Background(), path, ledger.Options{}); err == nil || !strings.Contains(err.Error(), "newer") {
		if err == nil {
			db.Close()
		}
		t.Errorf("err %v, want a refusal of schema 99", err)
	}
}

// TestARunsHeaderEditedByHandLeavesTheRunsReadable: a header that is not a JSON list leaves the
// run without one, and the other runs and the run itself still read; verify names the edit.
func TestARunsHeaderEditedByHandLeavesTheRunsReadable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := mustOpen(t)
	for _, id := range []string{"r1", "r2"} {
		must(t, db.AddRun(ctx, ledger.Run{ID: id, Kind: ledger.KindRun, StartedAt: time.Now(), Status: ledger.RunRunning, Columns: []string{"ref", "amount"}}))
	}
	if _, err := ledger.SQLOf(db).Exec(`UPDATE runs SET columns = '["ref",' WHERE id = 'r1'`); err != nil {
		t.Fatal(err)
	}
	runs, err := db.FindRuns(ctx, ledger.RunFilter{})
	if err != nil || len(runs) != 2 || runs[0].Columns != nil || len(runs[1].Columns) != 2 {
		t.Fatalf("runs %+v, %v; want both, r1 without a header", runs, err)
	}
	rep, err := db.VerifyChain(ctx)
	if err != nil || len(rep.Findings) == 0 {
		t.Fatalf("verify: %v %v, want the edit named", rep.Findings, err)
	}
}
