package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// ErrClosed is returned by Apply after Close.
var ErrClosed = errors.New("ledger is closed")

// ConflictError says that a payout was not in the state a Change or a Record expected, or that
// a reference is already recorded with other details. It unwraps to ErrStateConflict.
type ConflictError struct {
	Ref    string
	Want   State  // the Change's From
	Have   State  // the row's state; empty when the row does not exist
	Reason string // set instead of Want/Have for a Record conflict
}

func (e *ConflictError) Error() string {
	switch {
	case e.Reason != "":
		return fmt.Sprintf("payout %s: %s: %v", e.Ref, e.Reason, ErrStateConflict)
	case e.Have == "":
		return fmt.Sprintf("payout %s: not in the ledger (expected %s): %v", e.Ref, e.Want, ErrStateConflict)
	}
	return fmt.Sprintf("payout %s: is %s, expected %s: %v", e.Ref, e.Have, e.Want, ErrStateConflict)
}

func (e *ConflictError) Unwrap() error { return ErrStateConflict }

// maxBatchChanges bounds one group commit so that a flood of callers cannot make one
// transaction (and the wait of its first caller) arbitrarily long.
const maxBatchChanges = 4096

type applyReq struct {
	changes []Change
	done    chan error // buffered: the writer never blocks on a caller
}

// writer owns one connection and its prepared statements. It takes every Apply call that is
// waiting, applies each under its own SAVEPOINT inside one transaction, commits once
// (durably: synchronous=FULL) and only then answers the callers.
type writer struct {
	db       *DB
	conn     *sql.Conn
	reqs     chan *applyReq // unbuffered: a send that succeeds means the writer has taken the call
	quit     chan struct{}
	finished chan struct{}

	begin, commit, rollback  *sql.Stmt
	savepoint, release, undo *sql.Stmt
	state                    *sql.Stmt
	// updates holds an UPDATE per set of fields a Change carries (see updateSQL), prepared on
	// first use.
	updates map[changeShape]*sql.Stmt
	// insert records a Change's New payout, prepared on first use.
	insert *sql.Stmt
	events *multiRowInsert
	// pending are the events of the batch's accepted calls, inserted together before the commit.
	pending []any
}

// changeShape says which of a Change's optional fields are set: each shape has its own UPDATE,
// which sets only those columns. One statement for every shape (CASE on each field) costs the
// writer a third more per change, and the writer's CPU is most of what a run adds to its requests.
type changeShape uint8

const (
	shapeInvoice changeShape = 1 << iota
	shapeStatus
	shapeBankRef
	shapeError
	shapeAttempt
	shapeNotFound
	shapeResetNotFound
)

// textColumns are the optional text fields of a Change, in the order of their placeholders: one
// table for shapeOf, updateSQL and appendUpdateArgs, so that a statement and its arguments agree.
var textColumns = []struct {
	bit    changeShape
	column string
	value  func(Change) string
}{
	{shapeInvoice, "invoice_no", func(c Change) string { return c.InvoiceNo }},
	{shapeStatus, "transaction_status", func(c Change) string { return c.TransactionStatus }},
	{shapeBankRef, "bank_reference_no", func(c Change) string { return c.BankReferenceNo }},
	{shapeError, "last_error", func(c Change) string { return c.Error }},
}

func shapeOf(c Change) changeShape {
	var s changeShape
	for _, col := range textColumns {
		if col.value(c) != "" {
			s |= col.bit
		}
	}
	for _, f := range []struct {
		set bool
		bit changeShape
	}{{c.CountAttempt, shapeAttempt}, {c.CountNotFound, shapeNotFound}, {c.ResetNotFound, shapeResetNotFound}} {
		if f.set {
			s |= f.bit
		}
	}
	return s
}

// updateSQL is the UPDATE for one shape, and appendUpdateArgs its arguments, in the same order.
// Placeholders are plain "?": the driver looks each numbered one up by name.
func updateSQL(s changeShape) string {
	set := []string{"state = ?"}
	for _, col := range textColumns {
		if s&col.bit != 0 {
			set = append(set, col.column+" = ?")
		}
	}
	if s&shapeAttempt != 0 {
		set = append(set, "attempts = attempts + 1")
	}
	switch {
	case s&shapeNotFound != 0 && s&shapeResetNotFound != 0:
		set = append(set, "not_found_count = 1", "first_not_found_at = ?")
	case s&shapeNotFound != 0:
		set = append(set, "not_found_count = not_found_count + 1",
			"first_not_found_at = CASE WHEN first_not_found_at = '' THEN ? ELSE first_not_found_at END")
	case s&shapeResetNotFound != 0:
		set = append(set, "not_found_count = 0", "first_not_found_at = ''")
	}
	set = append(set, "updated_at = ?")
	return "UPDATE payouts SET " + strings.Join(set, ", ") + " WHERE ref = ? AND state = ?"
}

func appendUpdateArgs(args []any, s changeShape, c Change, now string) []any {
	args = append(args, string(c.To))
	for _, col := range textColumns {
		if s&col.bit != 0 {
			args = append(args, col.value(c))
		}
	}
	if s&shapeNotFound != 0 {
		args = append(args, now)
	}
	return append(args, now, c.Ref, string(c.From))
}

const eventColumns = `INSERT INTO events (ref, run_id, at, from_state, to_state, detail, payload) VALUES `

func newWriter(ctx context.Context, db *DB) (*writer, error) {
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return nil, err
	}
	w := &writer{db: db, conn: conn, reqs: make(chan *applyReq), quit: make(chan struct{}), finished: make(chan struct{}),
		updates: make(map[changeShape]*sql.Stmt)}
	w.events = &multiRowInsert{prep: conn, head: eventColumns, row: "(?, ?, ?, ?, ?, ?, ?)", width: 7}
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&w.begin, "BEGIN IMMEDIATE"},
		{&w.commit, "COMMIT"},
		{&w.rollback, "ROLLBACK"},
		{&w.savepoint, "SAVEPOINT apply"},
		{&w.release, "RELEASE apply"},
		{&w.undo, "ROLLBACK TO apply"},
		{&w.state, "SELECT state FROM payouts WHERE ref = ?"},
	} {
		if *p.stmt, err = conn.PrepareContext(ctx, p.sql); err != nil {
			conn.Close()
			return nil, fmt.Errorf("prepare %q: %w", p.sql, err)
		}
	}
	go w.run()
	return w, nil
}

func (w *writer) close() error {
	close(w.quit)
	<-w.finished
	var errs []error
	stmts := []*sql.Stmt{w.begin, w.commit, w.rollback, w.savepoint, w.release, w.undo, w.state}
	for _, st := range w.updates {
		stmts = append(stmts, st)
	}
	if w.insert != nil {
		stmts = append(stmts, w.insert)
	}
	for _, st := range stmts {
		errs = append(errs, st.Close())
	}
	errs = append(errs, w.events.close())
	return errors.Join(append(errs, w.conn.Close())...)
}

func (w *writer) run() {
	defer close(w.finished)
	batch := make([]*applyReq, 0, 64)
	for {
		select {
		case r := <-w.reqs:
			batch = append(batch[:0], r)
		case <-w.quit:
			return
		}
		n := len(batch[0].changes)
	drain:
		for n < maxBatchChanges {
			select {
			case r := <-w.reqs:
				batch = append(batch, r)
				n += len(r.changes)
			default:
				break drain
			}
		}
		w.commitBatch(batch)
		clear(batch)
	}
}

// commitBatch applies the calls of one batch in one transaction. A call that fails (a state
// conflict, say) is answered with its error and none of its changes is kept; the others commit.
// If the transaction itself fails, every call of the batch gets that error, and none of them was
// recorded.
//
// The batch is first applied without savepoints, whose page copies cost the writer about a tenth
// of its time: a refused single change has touched nothing, and should a call of several changes
// be refused after some of them were made, the whole transaction is rolled back and the batch is
// applied again with a savepoint around each such call.
func (w *writer) commitBatch(batch []*applyReq) {
	ctx := context.Background() // a batch taken is finished: callers wait for the outcome
	results, retry, err := w.tryBatch(ctx, batch, false)
	if err == nil && retry {
		results, _, err = w.tryBatch(ctx, batch, true)
	}
	if err != nil {
		err = fmt.Errorf("apply: %w", err)
		for _, r := range batch {
			r.done <- err
		}
		return
	}
	for i, r := range batch {
		r.done <- results[i]
	}
}

// tryBatch applies batch in one transaction and commits it, or rolls it back and returns the
// error. Without savepoints, it rolls back and asks for a retry (retry true, err nil) as soon as
// a call of several changes is refused.
func (w *writer) tryBatch(ctx context.Context, batch []*applyReq, savepoints bool) (results []error, retry bool, err error) {
	fail := func(err error) ([]error, bool, error) {
		w.rollback.ExecContext(ctx) // the error that matters is err; the tx is gone either way
		return nil, false, err
	}
	if _, err := w.begin.ExecContext(ctx); err != nil {
		return fail(err)
	}
	results = make([]error, len(batch))
	now := fmtTime(w.db.now())
	w.pending = w.pending[:0]
	for i, r := range batch {
		// A refused single change has touched nothing (its UPDATE matched no row), and any other
		// error fails the whole batch, which rolls it back: only calls of several changes may
		// need a savepoint.
		guarded := savepoints && len(r.changes) > 1
		if guarded {
			if _, err := w.savepoint.ExecContext(ctx); err != nil {
				return fail(err)
			}
		}
		mark := len(w.pending)
		err := w.applyOne(ctx, now, r.changes)
		if err != nil {
			w.pending = w.pending[:mark] // a refused call records no event
		}
		var ce *ConflictError
		if err != nil && !errors.As(err, &ce) {
			return fail(err)
		}
		if err != nil && len(r.changes) > 1 && !savepoints {
			w.rollback.ExecContext(ctx)
			return nil, true, nil
		}
		if guarded {
			if err != nil {
				if _, uerr := w.undo.ExecContext(ctx); uerr != nil {
					return fail(uerr)
				}
			}
			if _, err := w.release.ExecContext(ctx); err != nil {
				return fail(err)
			}
		}
		results[i] = err
	}
	// Inserted together: an INSERT of many rows costs about half as much a row as one of one.
	if err := w.events.exec(ctx, w.pending); err != nil {
		return fail(fmt.Errorf("events: %w", err))
	}
	if _, err := w.commit.ExecContext(ctx); err != nil {
		return fail(err)
	}
	return results, false, nil
}

// applyOne makes a call's changes and queues their events in w.pending.
func (w *writer) applyOne(ctx context.Context, now string, changes []Change) error {
	var args [12]any
	for _, c := range changes {
		if c.New != nil {
			if err := w.insertNew(ctx, now, c); err != nil {
				return err
			}
			continue
		}
		shape := shapeOf(c)
		st, err := w.updateStmt(ctx, shape)
		if err != nil {
			return err
		}
		res, err := st.ExecContext(ctx, appendUpdateArgs(args[:0], shape, c, now)...)
		if err != nil {
			return fmt.Errorf("apply %s: %w", c.Ref, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("apply %s: %w", c.Ref, err)
		} else if n != 1 {
			var have string
			if err := w.state.QueryRowContext(ctx, c.Ref).Scan(&have); err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("apply %s: %w", c.Ref, err)
			}
			return &ConflictError{Ref: c.Ref, Want: c.From, Have: State(have)}
		}
		w.pending = append(w.pending, c.Ref, c.RunID, now, string(c.From), string(c.To), c.Detail, c.Payload)
	}
	return nil
}

// insertNew records c.New in state c.To. Recording a payout with its first intent, rather than
// READY before the run sends anything and then moving it, saves a row an UPDATE, and the run the
// recording of all its payouts on one core before its first request.
func (w *writer) insertNew(ctx context.Context, now string, c Change) error {
	p := c.New
	if w.insert == nil {
		st, err := w.conn.PrepareContext(ctx, `INSERT INTO payouts (ref, run_id, line, recipient, provider_id,
			bank, account, amount, description, state, attempts, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (ref) DO NOTHING`)
		if err != nil {
			return fmt.Errorf("prepare insert: %w", err)
		}
		w.insert = st
	}
	runID, attempts := p.RunID, 0
	if runID == "" {
		runID = c.RunID
	}
	if c.CountAttempt {
		attempts = 1
	}
	res, err := w.insert.ExecContext(ctx, p.Ref, runID, p.Line, p.Recipient, p.ProviderID, p.Bank, p.Account,
		amountText(p.Amount), p.Description, string(c.To), attempts, now, now)
	if err != nil {
		return fmt.Errorf("apply %s: %w", c.Ref, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("apply %s: %w", c.Ref, err)
	} else if n != 1 {
		return &ConflictError{Ref: c.Ref, Reason: "already in the ledger, not recorded again"}
	}
	w.pending = append(w.pending, c.Ref, c.RunID, now, "", string(Ready), c.NewDetail, "",
		c.Ref, c.RunID, now, string(c.From), string(c.To), c.Detail, c.Payload)
	return nil
}

func (w *writer) updateStmt(ctx context.Context, shape changeShape) (*sql.Stmt, error) {
	if st, ok := w.updates[shape]; ok {
		return st, nil
	}
	st, err := w.conn.PrepareContext(ctx, updateSQL(shape))
	if err != nil {
		return nil, fmt.Errorf("prepare update: %w", err)
	}
	w.updates[shape] = st
	return st, nil
}

// Apply makes the changes, each with its event, atomically: if any change's From is not the
// row's current state, Apply returns a *ConflictError (errors.Is ErrStateConflict) and none of
// the changes of this call is made. Concurrent calls are merged into one transaction by the
// ledger's writer; Apply returns only after that transaction is durably committed.
//
// ctx is honoured only until the writer takes the call: cancelled before, Apply returns
// ctx.Err() and nothing was recorded. Once taken, Apply waits for the commit and returns its
// outcome whatever ctx says, so that a nil error always means "recorded" and ctx.Err() always
// means "not recorded".
func (db *DB) Apply(ctx context.Context, changes ...Change) error {
	if len(changes) == 0 {
		return nil
	}
	for _, c := range changes {
		if c.New != nil && (c.New.Ref != c.Ref || c.From != Ready || shapeOf(c)&^shapeAttempt != 0) {
			// Checked here, not by the writer: a caller's mistake must not fail the calls it is batched with.
			return fmt.Errorf("apply %s: a new payout moves from READY and only counts an attempt", c.Ref)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r := &applyReq{changes: changes, done: make(chan error, 1)}
	select {
	case db.w.reqs <- r:
	case <-ctx.Done():
		return ctx.Err()
	case <-db.w.quit:
		return ErrClosed
	}
	return <-r.done
}
