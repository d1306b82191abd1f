package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"strings"
)

// sealedActor stamps the events that were recorded before the chain existed: who wrote them was
// not recorded.
const sealedActor = "unknown: recorded before the audit trail, sealed at migration"

// afterMigration runs, in the migration's transaction, the step a migration needs from the
// program.
func (db *DB) afterMigration(ctx context.Context, tx *sql.Tx, name string) error {
	if strings.HasSuffix(name, "_audit.sql") {
		return sealChain(ctx, tx)
	}
	return nil
}

// sealChain brings a ledger's existing events into the chain, in id order. Their content is taken
// as it stands at the migration: each payout's first event gets the payout's recorded details and
// the digest of its name and account number, and its last event the invoice number and statuses
// the row holds, so that the replay of `payout audit verify` ends at the row. Each payout gets
// its salt.
func sealChain(ctx context.Context, tx *sql.Tx) error {
	payouts, err := scanAll(ctx, tx, `SELECT `+payoutColumns+` FROM payouts`, scanPayout)
	if err != nil {
		return fmt.Errorf("seal chain: %w", err)
	}
	byRef := make(map[string]Payout, len(payouts))
	salts := make(map[string]string, len(payouts))
	for _, p := range payouts {
		byRef[p.Ref] = p
		salts[p.Ref] = newSalt()
		if _, err := tx.ExecContext(ctx, `INSERT INTO payout_salts (ref, salt) VALUES (?, ?)`, p.Ref, salts[p.Ref]); err != nil {
			return fmt.Errorf("seal chain: %w", err)
		}
	}
	type span struct{ first, last int64 }
	spans, err := scanAll(ctx, tx, `SELECT ref, min(id), max(id) FROM events GROUP BY ref`, func(s scanner) (struct {
		ref string
		span
	}, error) {
		var r struct {
			ref string
			span
		}
		return r, s.Scan(&r.ref, &r.first, &r.last)
	})
	if err != nil {
		return fmt.Errorf("seal chain: %w", err)
	}
	spanOf := make(map[string]span, len(spans))
	for _, s := range spans {
		spanOf[s.ref] = s.span
	}
	events, err := scanAll(ctx, tx, `SELECT id, ref, run_id, at, from_state, to_state, detail, payload FROM events ORDER BY id`,
		func(s scanner) (ChainEvent, error) {
			var e ChainEvent
			return e, s.Scan(&e.ID, &e.Ref, &e.RunID, &e.At, &e.From, &e.To, &e.Detail, &e.Payload)
		})
	if err != nil {
		return fmt.Errorf("seal chain: %w", err)
	}
	prev := ""
	for _, e := range events {
		p, sp := byRef[e.Ref], spanOf[e.Ref]
		facts := map[string]string{}
		if e.Payload != "" {
			e.Personal = personalDigest(salts[e.Ref], "payload", e.Payload)
		}
		if e.ID == sp.first {
			maps.Copy(facts, decodeFacts(recordedFacts(p, p.RunID)))
			e.Personal = personalDigest(salts[e.Ref], "recipient", p.Recipient, "account", p.Account)
		}
		if e.ID == sp.last {
			maps.Copy(facts, map[string]string{"invoice_no": p.InvoiceNo, "transaction_status": p.TransactionStatus,
				"bank_reference_no": p.BankReferenceNo})
		}
		e.Facts = factsJSON(facts)
		e.Actor, e.Version, e.PrevHash = sealedActor, "unknown", prev
		e.Hash = HashEvent(e)
		prev = e.Hash
		_, err := tx.ExecContext(ctx, `UPDATE events SET actor = ?, version = ?, facts = ?, personal = ?, prev_hash = ?, hash = ?
			WHERE id = ?`, e.Actor, e.Version, e.Facts, e.Personal, e.PrevHash, e.Hash, e.ID)
		if err != nil {
			return fmt.Errorf("seal chain: event %d: %w", e.ID, err)
		}
	}
	return nil
}

// scanAll runs query and scans every row with scan.
func scanAll[T any](ctx context.Context, q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, query string, scan func(scanner) (T, error), args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
