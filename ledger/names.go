package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// Values of NameCheck.Check: how the name the bank holds for the account compares with the
// payout's recipient. The comparison itself is the callback receiver's.
const (
	NameNotCompared = ""
	NameMatch       = "match"
	NameMismatch    = "mismatch"
)

// NameCheck is the name a callback said the bank holds for a payout's account, and its verdict
// against the recipient. DisplayName is a person's name, like Recipient.
type NameCheck struct {
	Ref         string
	Recipient   string
	DisplayName string
	Check       string // NameNotCompared, NameMatch or NameMismatch
}

// SetNameCheck records the bank's name for ref's account and its verdict, with an event in the
// payout's trail (the name as a salted digest). It never touches the payout's state, records
// nothing when both are what the payout already has (a callback delivered again), and returns
// ErrNotFound for a reference not in the ledger.
func (db *DB) SetNameCheck(ctx context.Context, ref, displayName, check string) error {
	if err := db.setNameCheck(ctx, ref, displayName, check); err != nil {
		return fmt.Errorf("name check of %s: %w", ref, err)
	}
	return nil
}

func (db *DB) setNameCheck(ctx context.Context, ref, displayName, check string) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var state, oldName, oldCheck string
	err = tx.QueryRowContext(ctx, `SELECT state, display_name, name_check FROM payouts WHERE ref = $1`, ref).Scan(&state, &oldName, &oldCheck)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	} else if err != nil {
		return err
	}
	if oldName == displayName && oldCheck == check {
		return nil
	}
	salt, err := saltOf(ctx, tx, ref)
	if err != nil {
		return err
	}
	digest := PurgedPayload
	if salt == "" {
		displayName = oldName // purged: no personal data of it is kept again
	} else {
		digest = personalDigest(salt, "display_name", displayName)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE payouts SET display_name = $1, name_check = $2 WHERE ref = $3`, displayName, check, ref); err != nil {
		return err
	}
	head, err := readChainHead(ctx, tx)
	if err != nil {
		return err
	}
	e := &ChainEvent{Ref: ref, At: fmtTime(db.now()), From: state, To: state, Detail: nameCheckDetail(check),
		Facts: factsText(nameFact, digest, "name_check", nameCheckFact(check), nameOnlyFact, "1")}
	db.newChainer(head).link(e)
	if _, err := tx.ExecContext(ctx, insertEventSQL, eventArgs(make([]any, 0, 14), e)...); err != nil {
		return err
	}
	return tx.Commit()
}

// nameFact is the key of the facts that hold the salted digest of the bank's name; nameOnlyFact
// marks an event that recorded only the name, which leaves the payout's update time.
const (
	nameFact     = "display_name"
	nameOnlyFact = "name_only"
)

func nameCheckDetail(check string) string {
	switch check {
	case NameMatch:
		return "the bank's name for the account matches the recipient"
	case NameMismatch:
		return "the bank's name for the account differs from the recipient"
	}
	return "the bank's name for the account recorded, not compared"
}

// NameFilter selects name checks: Refs, those of the payouts among these references that have a
// bank's name; Mismatches, those whose bank's name differs from the recipient, of every payout
// or of those among Refs. A filter that sets neither selects nothing.
type NameFilter struct {
	Refs       []string
	Mismatches bool
}

// NameChecks returns the name checks the filter selects, by reference.
func (db *DB) NameChecks(ctx context.Context, f NameFilter) ([]NameCheck, error) {
	var where []string
	var args []any
	if f.Mismatches {
		// The index's own WHERE, written out: with a parameter in its place SQLite passes the
		// partial index over and reads every payout.
		where = append(where, nameMismatchWhere)
	}
	if len(f.Refs) > 0 {
		args = append(args, jsonList(f.Refs))
		where = append(where, `display_name <> '' AND ref IN `+db.eng.inJSONList())
	}
	if len(where) == 0 {
		return nil, nil
	}
	found, err := db.queryNameChecks(ctx, `WHERE `+strings.Join(where, ` AND `)+` ORDER BY ref`, args...)
	if err != nil {
		return nil, fmt.Errorf("name checks: %w", err)
	}
	return found, nil
}

// nameChecksSQL reads the name checks of the payouts its WHERE selects; nameMismatchWhere
// selects those of the index payouts_name_mismatch.
const (
	nameChecksSQL     = `SELECT ref, recipient, display_name, name_check FROM payouts `
	nameMismatchWhere = `name_check = '` + NameMismatch + `'`
)

func (db *DB) queryNameChecks(ctx context.Context, where string, args ...any) ([]NameCheck, error) {
	rows, err := db.sql.QueryContext(ctx, nameChecksSQL+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []NameCheck
	for rows.Next() {
		var c NameCheck
		if err := rows.Scan(&c.Ref, &c.Recipient, &c.DisplayName, &c.Check); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
