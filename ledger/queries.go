package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

const payoutColumns = `ref, run_id, line, recipient, provider_id, bank, account, amount, description, state,
	invoice_no, transaction_status, bank_reference_no, attempts, not_found_count, first_not_found_at,
	last_error, created_at, updated_at, refusal_confirmed, claimed_by`

type scanner interface{ Scan(dest ...any) error }

func scanPayout(s scanner) (Payout, error) {
	var p Payout
	var amount, state, firstNF, created, updated string
	err := s.Scan(&p.Ref, &p.RunID, &p.Line, &p.Recipient, &p.ProviderID, &p.Bank, &p.Account, &amount,
		&p.Description, &state, &p.InvoiceNo, &p.TransactionStatus, &p.BankReferenceNo, &p.Attempts,
		&p.NotFoundCount, &firstNF, &p.LastError, &created, &updated, &p.RefusalConfirmed, &p.ClaimedBy)
	if err != nil {
		return Payout{}, err
	}
	p.State = State(state)
	if p.Amount, err = decimal.NewFromString(amount); err != nil {
		return Payout{}, fmt.Errorf("payout %s: amount %q: %w", p.Ref, amount, err)
	}
	if p.FirstNotFoundAt, err = parseTime(firstNF); err != nil {
		return Payout{}, err
	}
	if p.CreatedAt, err = parseTime(created); err != nil {
		return Payout{}, err
	}
	if p.UpdatedAt, err = parseTime(updated); err != nil {
		return Payout{}, err
	}
	return p, nil
}

func (db *DB) queryPayouts(ctx context.Context, query string, args ...any) ([]Payout, error) {
	rows, err := db.sql.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Payout
	for rows.Next() {
		p, err := scanPayout(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// Get returns the payout with this reference, or ErrNotFound.
func (db *DB) Get(ctx context.Context, ref string) (Payout, error) {
	p, err := scanPayout(db.sql.QueryRowContext(ctx, `SELECT `+payoutColumns+` FROM payouts WHERE ref = $1`, ref))
	if errors.Is(err, sql.ErrNoRows) {
		return Payout{}, fmt.Errorf("get payout %s: %w", ref, ErrNotFound)
	}
	if err != nil {
		return Payout{}, fmt.Errorf("get payout %s: %w", ref, err)
	}
	return p, nil
}

// LookupFields says which fields of each payout Lookup reads.
type LookupFields int

const (
	// WholePayouts reads every field: what a payout to be sent or looked up needs.
	WholePayouts LookupFields = iota
	// CheckFields reads what checking an input row against its payout needs: Ref, RunID, Line,
	// ProviderID, Account, Amount, State and InvoiceNo; the other fields are zero. Reading eight
	// columns instead of every one is most of what a chunk's check costs.
	CheckFields
)

// Lookup returns the payouts among refs that are in the ledger, keyed by reference, with the
// fields how says.
func (db *DB) Lookup(ctx context.Context, refs []string, how LookupFields) (map[string]Payout, error) {
	out := make(map[string]Payout, len(refs))
	if len(refs) == 0 {
		return out, nil
	}
	var err error
	switch how {
	case WholePayouts:
		err = db.lookupWhole(ctx, refs, out)
	case CheckFields:
		err = db.lookupCheckFields(ctx, refs, out)
	default:
		err = fmt.Errorf("no such LookupFields: %d", how)
	}
	if err != nil {
		return nil, fmt.Errorf("look up payouts: %w", err)
	}
	return out, nil
}

// lookupWhole adds to out the payouts among refs, read whole.
func (db *DB) lookupWhole(ctx context.Context, refs []string, out map[string]Payout) error {
	ps, err := db.queryPayouts(ctx, db.eng.lookupSQL(), jsonList(refs))
	if err != nil {
		return err
	}
	for _, p := range ps {
		out[p.Ref] = p
	}
	return nil
}

// lookupCheckFields adds to out the payouts among refs, their CheckFields alone.
func (db *DB) lookupCheckFields(ctx context.Context, refs []string, out map[string]Payout) error {
	rows, err := db.sql.QueryContext(ctx, db.eng.lookupCheckFieldsSQL(), jsonList(refs))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var p Payout
		var amount, state string
		if err := rows.Scan(&p.Ref, &p.RunID, &p.Line, &p.ProviderID, &p.Account, &amount, &state, &p.InvoiceNo); err != nil {
			return err
		}
		if p.Amount, err = decimal.NewFromString(amount); err != nil {
			return fmt.Errorf("payout %s: amount %q: %w", p.Ref, amount, err)
		}
		p.State = State(state)
		out[p.Ref] = p
	}
	return rows.Err()
}

func (e *engine) lookupSQL() string {
	return `SELECT ` + plainPayoutColumns + ` FROM ` + e.payoutsOfJSONList()
}

func (e *engine) lookupCheckFieldsSQL() string {
	return `SELECT p.ref, p.run_id, p.line, p.provider_id, p.account, p.amount, p.state, p.invoice_no FROM ` + e.payoutsOfJSONList()
}

// Events returns a payout's audit trail, oldest first (empty for an unknown reference).
func (db *DB) Events(ctx context.Context, ref string) ([]Event, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT id, ref, run_id, at, from_state, to_state, detail, payload, actor
		FROM events WHERE ref = $1 ORDER BY id`, ref)
	if err != nil {
		return nil, fmt.Errorf("events of %s: %w", ref, err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		var at, from, to string
		if err := rows.Scan(&e.ID, &e.Ref, &e.RunID, &at, &from, &to, &e.Detail, &e.Payload, &e.Actor); err != nil {
			return nil, fmt.Errorf("events of %s: %w", ref, err)
		}
		if e.At, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("events of %s: %w", ref, err)
		}
		e.From, e.To = State(from), State(to)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events of %s: %w", ref, err)
	}
	return out, nil
}

// Record stores, in one transaction, every input row of a run and the payouts seen for the
// first time (in state READY unless they carry another, each with a "recorded" event). A fresh
// payout whose reference is already recorded with the same details is left as it is; with
// other details Record returns an error that is ErrStateConflict (errors.Is), naming the payout,
// and stores nothing. The run must have been added first.
func (db *DB) Record(ctx context.Context, runID string, rows []RunRow, fresh []Payout) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return fmt.Errorf("record run %s: %w", runID, err)
	}
	defer tx.Rollback()
	var file string
	if err := tx.QueryRowContext(ctx, `SELECT file FROM runs WHERE id = $1`, runID).Scan(&file); errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("record run %s: %w", runID, ErrNotFound)
	} else if err != nil {
		return fmt.Errorf("record run %s: %w", runID, err)
	}
	chain, err := db.startRecordedChain(ctx, tx)
	if err != nil {
		return fmt.Errorf("record run %s: %w", runID, err)
	}
	defer chain.close()
	now := fmtTime(db.now())
	if err := recordRows(ctx, tx, chain.chainer, runID, now, rows); err != nil {
		return fmt.Errorf("record run %s: %w", runID, err)
	}
	if err := recordPayouts(ctx, tx, runID, file, now, fresh, chain); err != nil {
		return fmt.Errorf("record run %s: %w", runID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("record run %s: %w", runID, err)
	}
	return nil
}

// insertChunk is the most rows one multi-row INSERT carries: SQLite's cost per statement, and
// database/sql's per call, is most of a small insert.
const insertChunk = 64

// preparer is what prepares Record's inserts: a *sql.Tx.
type preparer interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// multiRowInsert inserts rows several to a statement, and keeps a prepared statement per number
// of rows. Each row is width parameters in order, "($1, $2)", "($3, $4)", ... as eng writes them.
type multiRowInsert struct {
	eng  *engine
	prep preparer
	// head and tail hold no parameters: SQLite numbers each "?" by its place in the statement.
	head     string // "INSERT INTO t (cols) VALUES "
	tail     string // " ON CONFLICT ... RETURNING ..." or ""
	width    int    // placeholders in row
	prepared map[int]*sql.Stmt
}

func (m *multiRowInsert) stmt(ctx context.Context, rows int) (*sql.Stmt, error) {
	if st, ok := m.prepared[rows]; ok {
		return st, nil
	}
	var b strings.Builder
	b.WriteString(m.head)
	for r := range rows {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c := range m.width {
			if c > 0 {
				b.WriteString(", ")
			}
			b.WriteString(m.eng.param(r*m.width + c + 1))
		}
		b.WriteByte(')')
	}
	query := b.String() + m.tail
	st, err := m.prep.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if m.prepared == nil {
		m.prepared = make(map[int]*sql.Stmt)
	}
	m.prepared[rows] = st
	return st, nil
}

// exec inserts args, width of them a row, in statements of a power of two rows up to
// insertChunk: a long-lived multiRowInsert then prepares at most seven statements.
func (m *multiRowInsert) exec(ctx context.Context, args []any) error {
	for len(args) > 0 {
		n := min(insertChunk, len(args)/m.width)
		for n&(n-1) != 0 {
			n &= n - 1
		}
		st, err := m.stmt(ctx, n)
		if err != nil {
			return err
		}
		if _, err := st.ExecContext(ctx, args[:n*m.width]...); err != nil {
			return err
		}
		args = args[n*m.width:]
	}
	return nil
}

func (m *multiRowInsert) close() error {
	var errs []error
	for _, st := range m.prepared {
		errs = append(errs, st.Close())
	}
	return errors.Join(errs...)
}

// recordRows inserts a run's input lines, each sealed with its row event.
func recordRows(ctx context.Context, tx *sql.Tx, chain *chainer, runID, now string, rows []RunRow) error {
	ins := &multiRowInsert{eng: chain.eng, prep: tx, width: 13,
		head: `INSERT INTO run_rows (run_id, line, ref, recipient, provider_id, bank, account, amount, description,
		rejected, reason, skipped, paid_elsewhere) VALUES `}
	defer ins.close()
	args := make([]any, 0, insertChunk*ins.width)
	for chunk := range slices.Chunk(rows, insertChunk) {
		args = args[:0]
		for _, r := range chunk {
			args = append(args, runID, r.Line, r.Ref, r.Recipient, r.ProviderID, r.Bank, r.Account, r.Amount,
				r.Description, yes(r.Rejected), r.Reason, yes(r.Skipped), yes(r.PaidElsewhere))
		}
		if err := ins.exec(ctx, args); err != nil {
			return fmt.Errorf("lines %d to %d: %w", chunk[0].Line, chunk[len(chunk)-1].Line, err)
		}
		lines := make([]int, len(chunk))
		for i, r := range chunk {
			lines[i] = r.Line
		}
		if _, err := sealRows(ctx, tx, chain, "run_rows", runID, now, "input line recorded",
			`WHERE run_id = $1 AND line IN `+chain.eng.inJSONIntegersAt("$2")+` ORDER BY line`, runID, jsonList(lines)); err != nil {
			return fmt.Errorf("lines %d to %d: %w", chunk[0].Line, chunk[len(chunk)-1].Line, err)
		}
	}
	return nil
}

// recordPayouts inserts the fresh payouts a chunk at a time; RETURNING names those that were new,
// and only they get a "recorded" event. A reference already stored is compared with its row.
func recordPayouts(ctx context.Context, tx *sql.Tx, runID, file, now string, fresh []Payout, ev *recordedChain) error {
	ins := &multiRowInsert{eng: ev.eng, prep: tx, width: 12,
		head: `INSERT INTO payouts (ref, run_id, line, recipient, provider_id, bank, account, amount,
		description, state, created_at, updated_at) VALUES `,
		tail: ` ON CONFLICT (ref) DO NOTHING RETURNING ref`}
	defer ins.close()
	args := make([]any, 0, insertChunk*ins.width)
	inserted := make(map[string]bool, insertChunk)
	for chunk := range slices.Chunk(fresh, insertChunk) {
		st, err := ins.stmt(ctx, len(chunk))
		if err != nil {
			return err
		}
		args = args[:0]
		for _, p := range chunk {
			rid := p.RunID
			if rid == "" {
				rid = runID
			}
			args = append(args, p.Ref, rid, p.Line, p.Recipient, p.ProviderID, p.Bank, p.Account,
				amountText(p.Amount), p.Description, string(recordedState(p)), now, now)
		}
		clear(inserted)
		if err := collectRefs(ctx, st, args, inserted); err != nil {
			return fmt.Errorf("payouts %s to %s: %w", chunk[0].Ref, chunk[len(chunk)-1].Ref, err)
		}
		for _, p := range chunk {
			if !inserted[p.Ref] {
				if err := sameAsStored(ctx, tx, p); err != nil {
					return err
				}
				continue
			}
			// A ref twice in the chunk was inserted once: its second row is compared above.
			delete(inserted, p.Ref)
			ev.add(p, runID, now, RecordedDetail(file, p.Line))
		}
		if err := ev.flush(ctx); err != nil {
			return fmt.Errorf("events of payouts %s to %s: %w", chunk[0].Ref, chunk[len(chunk)-1].Ref, err)
		}
	}
	return nil
}

// RecordedDetail is the text of a payout's "recorded" event.
func RecordedDetail(file string, line int) string {
	return "recorded from " + file + " line " + strconv.Itoa(line)
}

func recordedState(p Payout) State {
	if p.State == "" {
		return Ready
	}
	return p.State
}

// collectRefs runs an INSERT ... RETURNING ref and adds the refs it returns to into.
func collectRefs(ctx context.Context, st *sql.Stmt, args []any, into map[string]bool) error {
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var ref string
		if err := rows.Scan(&ref); err != nil {
			return err
		}
		into[ref] = true
	}
	return rows.Err()
}

// sameAsStored accepts a fresh payout whose reference is already stored only with the same details.
func sameAsStored(ctx context.Context, tx *sql.Tx, p Payout) error {
	old, err := scanPayout(tx.QueryRowContext(ctx, `SELECT `+payoutColumns+` FROM payouts WHERE ref = $1`, p.Ref))
	if err != nil {
		return fmt.Errorf("payout %s: %w", p.Ref, err)
	}
	if !old.SameDetails(p) {
		return &conflictError{Ref: p.Ref, Reason: fmt.Sprintf("already recorded by run %s line %d with other details", old.RunID, old.Line)}
	}
	return nil
}

// amountText is the stored form of an amount: exact (never rounded), with at least the two
// decimals of MYR so that the file reads like money.
func amountText(d decimal.Decimal) string {
	return d.StringFixed(max(2, -d.Exponent()))
}
