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
	switch {
	case strings.HasSuffix(name, "_audit.sql"):
		return sealChain(ctx, tx)
	case strings.HasSuffix(name, "_trail.sql"):
		return db.sealTrail(ctx, tx)
	case strings.HasSuffix(name, "_typed_facts.sql"):
		return db.sealTypedFacts(ctx, tx)
	case strings.HasSuffix(name, "_policy_genesis.sql"):
		return db.writeGenesis(ctx, tx)
	}
	return nil
}

// sealTrail brings what the chain did not cover before into it, as it stands at the upgrade:
// every row of the tables covered by row events gets one, and every payout whose times,
// counters, last error, retry link or bank's name its events do not tell (they were not in the
// events' facts before) gets an attestation event recording them as the row holds them.
func (db *DB) sealTrail(ctx context.Context, tx *sql.Tx) error {
	head, err := readChainHead(ctx, tx)
	if err != nil {
		return fmt.Errorf("seal trail: %w", err)
	}
	c := &chainer{eng: db.eng, head: head, actor: sealedActor, version: orUnknown(db.version)}
	now := fmtTime(db.now())
	for _, t := range rowTables {
		if _, err := sealRows(ctx, tx, c, t.name, "", now, "sealed at the upgrade that brought its table into the chain", ""); err != nil {
			return fmt.Errorf("seal trail: %w", err)
		}
	}
	if err := attestPayouts(ctx, tx, c, now); err != nil {
		return fmt.Errorf("seal trail: %w", err)
	}
	return nil
}

// sealTypedFacts brings the columns that replaced text (payouts.refusal_confirmed,
// run_rows.paid_elsewhere), as the migration set them from that text, into the chain: the lines
// are sealed again with the new column, and each payout whose refusal was confirmed gets an
// attestation event recording it.
func (db *DB) sealTypedFacts(ctx context.Context, tx *sql.Tx) error {
	head, err := readChainHead(ctx, tx)
	if err != nil {
		return fmt.Errorf("seal typed facts: %w", err)
	}
	c := &chainer{eng: db.eng, head: head, actor: sealedActor, version: orUnknown(db.version)}
	now := fmtTime(db.now())
	if _, err := sealRows(ctx, tx, c, "run_rows", "", now, "sealed again at the upgrade that added its column paid_elsewhere", ""); err != nil {
		return fmt.Errorf("seal typed facts: %w", err)
	}
	if err := attestPayouts(ctx, tx, c, now); err != nil {
		return fmt.Errorf("seal typed facts: %w", err)
	}
	return nil
}

// attestPayouts appends an attestation event for each payout whose attested columns its events
// do not tell, a chunk of payouts at a time: the events are inserted once the chunk's reads are
// closed.
func attestPayouts(ctx context.Context, tx *sql.Tx, c *chainer, now string) error {
	after := ""
	for {
		var last sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT max(ref) FROM (SELECT ref FROM payouts WHERE ref > $1 ORDER BY ref LIMIT 2000) AS page`, after).Scan(&last)
		if err != nil {
			return err
		}
		if !last.Valid {
			return nil
		}
		if err := attestChunk(ctx, tx, c, now, after, last.String); err != nil {
			return err
		}
		after = last.String
	}
}

// attestedColumns are the payouts columns that events did not tell before the trail covered them,
// or before they were columns (refusal_confirmed). The bank's name stays last.
var attestedColumns = []string{"created_at", "updated_at", "attempts", "not_found_count", "first_not_found_at",
	"last_error", "retry_of", "refusal_confirmed", "name_check", "display_name"}

// attestChunk appends the attestation events of the payouts with references in (after, last].
func attestChunk(ctx context.Context, tx *sql.Tx, c *chainer, now, after, last string) error {
	var attests []*ChainEvent
	var rep ChainReport
	err := eachReplay(ctx, c.eng, tx, tx, &rep, "ref > $1 AND ref <= $2", []any{after, last}, func(r *replay, row payoutRow) {
		needed := false
		for _, p := range r.compare(row.col, row.salt) {
			for _, col := range attestedColumns {
				needed = needed || strings.HasPrefix(p, col+" ")
			}
		}
		if !needed {
			return
		}
		facts := map[string]string{attestFact: "schema upgrade"}
		for _, col := range attestedColumns[:len(attestedColumns)-1] { // the bank's name goes in as a digest
			facts[col] = row.col[col]
		}
		if row.col["display_name"] != "" {
			facts["name_check"] = nameCheckFact(row.col["name_check"])
		}
		switch {
		case row.col["display_name"] == "":
		case row.salt == "":
			facts[nameFact] = PurgedPayload
		default:
			facts[nameFact] = personalDigest(row.salt, "display_name", row.col["display_name"])
		}
		attests = append(attests, &ChainEvent{Ref: row.col["ref"], At: now, From: r.state, To: r.state,
			Detail: "its times and counters, as the ledger held them when the audit trail came to cover them", Facts: factsJSON(facts)})
	})
	if err != nil {
		return err
	}
	for _, e := range attests {
		c.link(e)
		if _, err := tx.ExecContext(ctx, insertEventSQL, eventArgs(make([]any, 0, 14), e)...); err != nil {
			return fmt.Errorf("attest %s: %w", e.Ref, err)
		}
	}
	return nil
}

// sealChain brings a ledger's existing events into the chain, in id order. Their content is taken
// as it stands at the migration: each payout's first event gets the payout's recorded details and
// the digest of its name and account number, and its last event the invoice number and statuses
// the row holds, so that the replay of `payout audit verify` ends at the row. Each payout gets
// its salt.
func sealChain(ctx context.Context, tx *sql.Tx) error {
	// It runs in an older migration than refusal_confirmed's and claimed_by's, which read as unset here.
	columns := strings.NewReplacer("refusal_confirmed", "0", "claimed_by", "''").Replace(payoutColumns)
	payouts, err := scanAll(ctx, tx, `SELECT `+columns+` FROM payouts`, scanPayout)
	if err != nil {
		return fmt.Errorf("seal chain: %w", err)
	}
	byRef := make(map[string]Payout, len(payouts))
	salts := make(map[string]string, len(payouts))
	for _, p := range payouts {
		byRef[p.Ref] = p
		salts[p.Ref] = newSalt()
		if _, err := tx.ExecContext(ctx, `INSERT INTO payout_salts (ref, salt) VALUES ($1, $2)`, p.Ref, salts[p.Ref]); err != nil {
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
		_, err := tx.ExecContext(ctx, `UPDATE events SET actor = $1, version = $2, facts = $3, personal = $4, prev_hash = $5, hash = $6
			WHERE id = $7`, e.Actor, e.Version, e.Facts, e.Personal, e.PrevHash, e.Hash, e.ID)
		if err != nil {
			return fmt.Errorf("seal chain: event %d: %w", e.ID, err)
		}
	}
	return nil
}

// scanAll runs query and scans every row with scan.
func scanAll[T any](ctx context.Context, q rowsQuerier, query string, scan func(scanner) (T, error), args ...any) ([]T, error) {
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
