package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// PurgedPayload replaces an event's or a callback's payload when purge masks it.
const PurgedPayload = "(purged)"

// purgeFact is the key of a purge event's facts that marks it: its value is the purge's cut-off.
const purgeFact = "purged"

// PurgeRequest says which payouts Purge masks and how.
type PurgeRequest struct {
	Before      time.Time           // payouts last changed before it
	MaskName    func(string) string // the masked form of a recipient_reference
	MaskAccount func(string) string // the masked form of an account number
	Detail      string              // the text of each purge event
	// WALWait is how long emptying SQLite's -wal waits for other processes to stop reading it.
	WALWait time.Duration
}

// PurgeResult says what Purge did.
type PurgeResult struct {
	Purged       []string // references of the payouts masked now
	Left         []Payout // payouts last changed before the cut-off that are not final: left as they are
	RejectedRows int      // rejected input rows (never payouts) masked
	Callbacks    int      // stored callbacks whose payload was replaced
	Plans        int      // plan statements recorded before the cut-off, masked
	// NotForgotten is why the ledger's files may still hold older copies of what was masked
	// (errors.Is ErrWALKept: other processes kept reading the -wal); nil when they hold none.
	// The masking is committed either way, and a later purge forgets again.
	NotForgotten error
}

// execCount runs an update through tx and says how many rows it changed.
func execCount(ctx context.Context, tx *sql.Tx, query string, args ...any) (int, error) {
	r, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	n, err := r.RowsAffected()
	return int(n), err
}

// Purge masks, in one transaction, the names and account numbers of the final payouts last
// changed before req.Before that are not purged yet: their payouts row and input rows get the
// masked forms, the payloads of their events and callbacks become PurgedPayload, and their salt
// is deleted, so that the digests in the chain can no longer be tried against guesses. Each gets a
// purge event, in the chain, that records the masked forms. References, amounts, states,
// invoice numbers, times and events are kept, and the chain still verifies. Rejected input rows
// of runs started before the cut-off, and callbacks received before it that belong to no kept
// payout, are masked too. Payouts that are not final are left and listed. Once the masking is
// committed, Purge makes what it overwrote unreadable from the ledger's files (forgetFreed), and
// says in the result when it could not. On PostgreSQL that is VACUUM FULL of the tables it masked
// in: the server's write-ahead log, its archive and its backups keep the old rows until they
// rotate out.
func (db *DB) Purge(ctx context.Context, req PurgeRequest) (PurgeResult, error) {
	var res PurgeResult
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return res, fmt.Errorf("purge: %w", err)
	}
	defer tx.Rollback()
	cutoff := fmtTime(req.Before)
	candidates, err := scanAll(ctx, tx, `SELECT `+payoutColumns+` FROM payouts p WHERE updated_at < $1
		AND NOT EXISTS (SELECT 1 FROM events e WHERE e.ref = p.ref AND e.facts LIKE '%"`+purgeFact+`":%')
		ORDER BY ref`, scanPayout, cutoff)
	if err != nil {
		return res, fmt.Errorf("purge: %w", err)
	}
	head, err := readChainHead(ctx, tx)
	if err != nil {
		return res, fmt.Errorf("purge: %w", err)
	}
	chain := db.newChainer(head)
	now := fmtTime(db.now())
	for _, p := range candidates {
		if !p.State.Final() {
			res.Left = append(res.Left, p)
			continue
		}
		if err := purgePayout(ctx, tx, chain, req, p, now); err != nil {
			return PurgeResult{}, fmt.Errorf("purge %s: %w", p.Ref, err)
		}
		res.Purged = append(res.Purged, p.Ref)
	}
	if res.RejectedRows, err = purgeRejectedRows(ctx, tx, chain, req, now); err != nil {
		return PurgeResult{}, fmt.Errorf("purge: rejected rows: %w", err)
	}
	// The callbacks about purged payouts (now or earlier: one may come after its payout was
	// purged), and those received before the cut-off about no payout of the ledger.
	ids, err := scanAll(ctx, tx, `UPDATE callbacks SET payload = $1 WHERE payload <> $2 AND (invoice_no IN
			(SELECT invoice_no FROM payouts p WHERE invoice_no <> '' AND NOT EXISTS (SELECT 1 FROM payout_salts s WHERE s.ref = p.ref))
		OR received_at < $3 AND NOT EXISTS (SELECT 1 FROM payouts p WHERE p.invoice_no = callbacks.invoice_no AND p.invoice_no <> ''))
		RETURNING id`, func(s scanner) (int64, error) {
		var id int64
		return id, s.Scan(&id)
	}, PurgedPayload, PurgedPayload, cutoff)
	if err == nil && len(ids) > 0 {
		err = resealPurged(ctx, tx, chain, "callbacks", now, req.Detail, `WHERE id IN `+chain.eng.inJSONIntegersAt("$1"), jsonList(ids))
	}
	if err != nil {
		return PurgeResult{}, fmt.Errorf("purge: callbacks: %w", err)
	}
	res.Callbacks = len(ids)
	// Plan statements list names and accounts too. One recorded before the cut-off is forgotten
	// with its payouts: the approvals on it can no longer be checked again, and a run that pays
	// its file again stores it again.
	if res.Plans, err = execCount(ctx, tx, `UPDATE events SET payload = $1 WHERE ref = '' AND to_state = $2 AND at < $3 AND payload <> $4`,
		PurgedPayload, EventPlan, cutoff, PurgedPayload); err != nil {
		return PurgeResult{}, fmt.Errorf("purge: plan statements: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return PurgeResult{}, fmt.Errorf("purge: %w", err)
	}
	res.NotForgotten = db.eng.forgetFreed(db, ctx, req.WALWait)
	return res, nil
}

// purgePayout masks one final payout and appends its purge event.
func purgePayout(ctx context.Context, tx *sql.Tx, chain *chainer, req PurgeRequest, p Payout, now string) error {
	name, account := req.MaskName(p.Recipient), req.MaskAccount(p.Account)
	// The name the bank holds for the account is a name too.
	var displayName string
	if err := tx.QueryRowContext(ctx, `SELECT display_name FROM payouts WHERE ref = $1`, p.Ref).Scan(&displayName); err != nil {
		return err
	}
	if displayName != "" {
		displayName = req.MaskName(displayName)
	}
	for _, st := range []struct {
		query string
		args  []any
	}{
		{`UPDATE payouts SET recipient = $1, account = $2, display_name = $3 WHERE ref = $4`, []any{name, account, displayName, p.Ref}},
		{`UPDATE run_rows SET recipient = $1, account = $2 WHERE ref = $3`, []any{name, account, p.Ref}},
		{`UPDATE events SET payload = $1 WHERE ref = $2 AND payload <> ''`, []any{PurgedPayload, p.Ref}},
		{`DELETE FROM payout_salts WHERE ref = $1`, []any{p.Ref}},
	} {
		if _, err := tx.ExecContext(ctx, st.query, st.args...); err != nil {
			return err
		}
	}
	if err := resealPurged(ctx, tx, chain, "run_rows", now, req.Detail, `WHERE ref = $1`, p.Ref); err != nil {
		return err
	}
	e := &ChainEvent{Ref: p.Ref, At: now, From: string(p.State), To: string(p.State), Detail: req.Detail,
		Facts: factsJSON(map[string]string{purgeFact: req.Before.UTC().Format(time.DateOnly), "recipient": name, "account": account,
			"display_name": displayName})}
	chain.link(e)
	_, err := tx.ExecContext(ctx, insertEventSQL, eventArgs(nil, e)...)
	return err
}

// purgeRejectedRows masks the input rows that validation rejected in runs started before the
// cut-off: they were never payouts, and hold names and account numbers as typed.
func purgeRejectedRows(ctx context.Context, tx *sql.Tx, chain *chainer, req PurgeRequest, now string) (int, error) {
	type row struct {
		runID              string
		line               int
		recipient, account string
	}
	rows, err := scanAll(ctx, tx, `SELECT r.run_id, r.line, r.recipient, r.account FROM run_rows r JOIN runs ON runs.id = r.run_id
		WHERE r.rejected = 1 AND runs.started_at < $1`,
		func(s scanner) (row, error) {
			var r row
			return r, s.Scan(&r.runID, &r.line, &r.recipient, &r.account)
		}, fmtTime(req.Before))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range rows {
		name, account := req.MaskName(r.recipient), req.MaskAccount(r.account)
		if name == r.recipient && account == r.account {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE run_rows SET recipient = $1, account = $2 WHERE run_id = $3 AND line = $4`,
			name, account, r.runID, r.line); err != nil {
			return 0, err
		}
		if err := resealPurged(ctx, tx, chain, "run_rows", now, req.Detail, `WHERE run_id = $1 AND line = $2`, r.runID, r.line); err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

// resealPurged follows a purge's masking of the rows of table that match where: the salts of
// their earlier row events are forgotten, so that the digests of what was masked can no longer
// be tried against guesses, and each row is sealed again as it is now.
func resealPurged(ctx context.Context, tx *sql.Tx, chain *chainer, table, now, detail, where string, args ...any) error {
	t := rowTableNamed(table)
	// where's parameters are $1 on; the mask is the one after them.
	mask := "$" + strconv.Itoa(len(args)+1)
	if _, err := tx.ExecContext(ctx, `UPDATE row_events SET payload = `+mask+` WHERE payload NOT IN ('', `+mask+`) AND ref IN
		(SELECT '`+t.name+`/' || `+t.key(chain.eng)+` FROM `+t.name+` `+where+`)`, append(slices.Clip(args), PurgedPayload)...); err != nil {
		return err
	}
	_, err := sealRows(ctx, tx, chain, table, "", now, detail, where, args...)
	return err
}
