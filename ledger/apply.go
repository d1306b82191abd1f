package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ErrClosed is returned by Apply after Close.
var ErrClosed = errors.New("ledger is closed")

// conflictError says that a payout was not in the state a Change or a Record expected, or that
// a reference is already recorded with other details. It unwraps to ErrStateConflict.
type conflictError struct {
	Ref    string
	Want   State  // the Change's From
	Have   State  // the row's state; empty when the row does not exist
	Reason string // set instead of Want/Have for a Record conflict
}

func (e *conflictError) Error() string {
	switch {
	case e.Reason != "":
		return fmt.Sprintf("payout %s: %s: %v", e.Ref, e.Reason, ErrStateConflict)
	case e.Have == "":
		return fmt.Sprintf("payout %s: not in the ledger (expected %s): %v", e.Ref, e.Want, ErrStateConflict)
	}
	return fmt.Sprintf("payout %s: is %s, expected %s: %v", e.Ref, e.Have, e.Want, ErrStateConflict)
}

func (e *conflictError) Unwrap() error { return ErrStateConflict }

// maxBatchChanges bounds one group commit so that a flood of callers cannot make one
// transaction (and the wait of its first caller) arbitrarily long.
const maxBatchChanges = 4096

type applyReq struct {
	changes []Change
	done    chan error // buffered: the writer never blocks on a caller
}

// writer owns one connection. It takes every Apply call that is waiting, applies them in one
// transaction (a call of several changes under its own SAVEPOINT, so that a refused call keeps
// none of its changes), commits once (durably: synchronous=FULL) and only then answers the
// callers: concurrent callers share a commit, which is a disk flush.
type writer struct {
	db   *DB
	conn *sql.Conn
	// update and insertEvent are prepared once: every change runs both, and parsing their SQL
	// again for each change would cost the writer about as much as running them.
	update, insertEvent *sql.Stmt
	chain               *chainer       // the transaction's chain, read when it begins
	reqs                chan *applyReq // unbuffered: a send that succeeds means the writer has taken the call
	quit                chan struct{}
	finished            chan struct{}
}

// updateSQL moves one payout and sets what its Change carries: an empty text field keeps the
// column, attempts is kept (1) or reset (0) and then counted (0 or 1), and notFound is one of the notFound* modes.
const updateSQL = `UPDATE payouts SET state = $1,
	invoice_no = COALESCE(NULLIF($2, ''), invoice_no),
	transaction_status = COALESCE(NULLIF($3, ''), transaction_status),
	bank_reference_no = COALESCE(NULLIF($4, ''), bank_reference_no),
	last_error = COALESCE(NULLIF($5, ''), last_error),
	retry_of = COALESCE(NULLIF($6, ''), retry_of),
	claimed_by = COALESCE(NULLIF($7, ''), claimed_by),
	display_name = CASE WHEN $8 <> '' THEN $9 ELSE display_name END,
	name_check = CASE WHEN $10 <> '' THEN $11 ELSE name_check END,
	refusal_confirmed = refusal_confirmed | $12,
	attempts = attempts * $13 + $14,
	not_found_count = CASE CAST($15 AS INTEGER) WHEN 1 THEN not_found_count + 1 WHEN 2 THEN 1 WHEN 3 THEN 0 ELSE not_found_count END,
	first_not_found_at = CASE CAST($16 AS INTEGER) WHEN 1 THEN CASE WHEN first_not_found_at = '' THEN $17 ELSE first_not_found_at END
		WHEN 2 THEN $18 WHEN 3 THEN '' ELSE first_not_found_at END,
	updated_at = $19
	WHERE ref = $20 AND state = $21`

// The ways a Change moves a payout's count of "not found" lookups.
const (
	notFoundKeep  = iota
	notFoundCount // CountNotFound
	notFoundFirst // CountNotFound and ResetNotFound: a new count, of one
	notFoundReset // ResetNotFound
)

func notFoundMode(c Change) int {
	switch {
	case c.CountNotFound && c.ResetNotFound:
		return notFoundFirst
	case c.CountNotFound:
		return notFoundCount
	case c.ResetNotFound:
		return notFoundReset
	}
	return notFoundKeep
}

func newWriter(ctx context.Context, db *DB) (*writer, error) {
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return nil, err
	}
	w := &writer{db: db, conn: conn, reqs: make(chan *applyReq), quit: make(chan struct{}), finished: make(chan struct{})}
	if w.update, err = conn.PrepareContext(ctx, updateSQL); err == nil {
		w.insertEvent, err = conn.PrepareContext(ctx, insertEventSQL)
	}
	if err != nil {
		return nil, errors.Join(err, w.closeStatements(), conn.Close())
	}
	go w.run()
	return w, nil
}

func (w *writer) closeStatements() error {
	var errs []error
	for _, st := range []*sql.Stmt{w.update, w.insertEvent} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

func (w *writer) close() error {
	close(w.quit)
	<-w.finished
	return errors.Join(w.closeStatements(), w.conn.Close())
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
func (w *writer) commitBatch(batch []*applyReq) {
	// A batch taken is finished, whatever its callers' contexts: they wait for the outcome. On a
	// server it is bounded all the same, so that a ledger that stops answering fails it rather
	// than hanging every caller (engine.boundWrites).
	ctx := context.Background()
	if w.db.eng.boundWrites {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, writeDeadline)
		defer cancel()
	}
	results, err := w.applyBatch(ctx, batch)
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

// applyBatch applies batch in one transaction and commits it, or rolls it back and returns the
// error that stopped it. A refused call's error is in results.
func (w *writer) applyBatch(ctx context.Context, batch []*applyReq) ([]error, error) {
	exec := func(stmt string) error {
		_, err := w.conn.ExecContext(ctx, stmt)
		return err
	}
	begin := func() error {
		for i, stmt := range w.db.eng.beginWrite {
			if err := exec(stmt); err != nil {
				if i > 0 {
					exec("ROLLBACK")
				}
				return err
			}
		}
		return nil
	}
	if err := w.db.holdChain(ctx, begin, exec, func() { exec("ROLLBACK") }); err != nil {
		return nil, err
	}
	head, err := readChainHead(ctx, w.conn)
	if err != nil {
		w.conn.ExecContext(ctx, "ROLLBACK")
		return nil, err
	}
	w.chain = w.db.newChainer(head)
	results := make([]error, len(batch))
	now := fmtTime(w.db.now())
	for i, r := range batch {
		err := w.applyCall(ctx, now, r.changes)
		var ce *conflictError
		if err != nil && !errors.As(err, &ce) {
			w.conn.ExecContext(ctx, "ROLLBACK") // the error that matters is err; the tx is gone either way
			return nil, err
		}
		results[i] = err
	}
	if _, err := w.conn.ExecContext(ctx, "COMMIT"); err != nil {
		w.conn.ExecContext(ctx, "ROLLBACK")
		return nil, err
	}
	return results, nil
}

// applyCall makes one call's changes, each with its event. A call of several changes runs under
// a savepoint, rolled back when one of them is refused: a single change that is refused has
// touched nothing.
func (w *writer) applyCall(ctx context.Context, now string, changes []Change) error {
	if len(changes) == 1 {
		return w.applyChange(ctx, now, changes[0])
	}
	if _, err := w.conn.ExecContext(ctx, "SAVEPOINT apply"); err != nil {
		return err
	}
	head := w.chain.head
	for _, c := range changes {
		if err := w.applyChange(ctx, now, c); err != nil {
			w.chain.head = head // the events rolled back below leave the chain
			if _, uerr := w.conn.ExecContext(ctx, "ROLLBACK TO apply"); uerr != nil {
				return uerr
			}
			if _, rerr := w.conn.ExecContext(ctx, "RELEASE apply"); rerr != nil {
				return rerr
			}
			return err
		}
	}
	_, err := w.conn.ExecContext(ctx, "RELEASE apply")
	return err
}

// applyChange moves one payout and appends its event, or returns a *conflictError when the
// payout is not in c.From.
func (w *writer) applyChange(ctx context.Context, now string, c Change) error {
	keep, attempt, mode := 1, 0, notFoundMode(c)
	if c.ResetAttempts {
		keep = 0
	}
	if c.CountAttempt {
		attempt = 1
	}
	res, err := w.update.ExecContext(ctx, string(c.To), c.InvoiceNo, c.TransactionStatus, c.BankReferenceNo,
		c.Error, c.RetryOf, c.ClaimedBy, c.DisplayName, c.DisplayName, c.DisplayName, c.NameCheck, yes(c.ConfirmRefusal), keep, attempt, mode, mode, now, now, now, c.Ref, string(c.From))
	if err != nil {
		return fmt.Errorf("apply %s: %w", c.Ref, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("apply %s: %w", c.Ref, err)
	} else if n != 1 {
		var have string
		err := w.conn.QueryRowContext(ctx, `SELECT state FROM payouts WHERE ref = $1`, c.Ref).Scan(&have)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("apply %s: %w", c.Ref, err)
		}
		return &conflictError{Ref: c.Ref, Want: c.From, Have: State(have)}
	}
	e, err := w.chain.changeEvent(ctx, w.conn, now, c)
	if err != nil {
		return err
	}
	if _, err := w.insertEvent.ExecContext(ctx, eventArgs(make([]any, 0, 14), e)...); err != nil {
		return fmt.Errorf("event of %s: %w", c.Ref, err)
	}
	return nil
}

// Apply makes the changes, each with its event, atomically: if any change is not a move of the
// state machine (Allowed), Apply returns an error that is ErrIllegalMove (errors.Is) and names the
// payout and the move; if any change's From is not the row's current state, one that is
// ErrStateConflict and names the payout, the state expected and the state it is in; either way
// none of the changes of this call is made. Concurrent calls are merged into one transaction by
// the ledger's writer; Apply returns only after that transaction is durably committed.
//
// ctx is honoured only until the writer takes the call: cancelled before, Apply returns
// ctx.Err() and nothing was recorded. Once taken, Apply waits for the commit and returns its
// outcome whatever ctx says, so that a nil error always means "recorded" and ctx.Err() always
// means "not recorded".
func (db *DB) Apply(ctx context.Context, changes ...Change) error {
	if len(changes) == 0 {
		return nil
	}
	if err := checkMoves(changes); err != nil {
		return err
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
