package ledger

import (
	"context"
	"fmt"
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

// SetNameCheck records the bank's name for ref's account and its verdict. It never touches the
// payout's state, and returns ErrNotFound for a reference not in the ledger.
func (db *DB) SetNameCheck(ctx context.Context, ref, displayName, check string) error {
	res, err := db.sql.ExecContext(ctx, `UPDATE payouts SET display_name = ?, name_check = ? WHERE ref = ?`,
		displayName, check, ref)
	if err != nil {
		return fmt.Errorf("name check of %s: %w", ref, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("name check of %s: %w", ref, err)
	} else if n == 0 {
		return fmt.Errorf("name check of %s: %w", ref, ErrNotFound)
	}
	return nil
}

// NameChecks returns the name checks of the payouts among refs that have a bank's name, keyed
// by reference.
func (db *DB) NameChecks(ctx context.Context, refs []string) (map[string]NameCheck, error) {
	out := make(map[string]NameCheck)
	if len(refs) == 0 {
		return out, nil
	}
	found, err := db.queryNameChecks(ctx, `WHERE display_name <> '' AND ref IN `+inJSONList, jsonList(refs))
	if err != nil {
		return nil, fmt.Errorf("name checks: %w", err)
	}
	for _, c := range found {
		out[c.Ref] = c
	}
	return out, nil
}

// NameMismatches returns every payout whose bank's name does not match its recipient, by
// reference.
func (db *DB) NameMismatches(ctx context.Context) ([]NameCheck, error) {
	found, err := db.queryNameChecks(ctx, `WHERE name_check = ? ORDER BY ref`, NameMismatch)
	if err != nil {
		return nil, fmt.Errorf("name mismatches: %w", err)
	}
	return found, nil
}

func (db *DB) queryNameChecks(ctx context.Context, where string, args ...any) ([]NameCheck, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT ref, recipient, display_name, name_check FROM payouts `+where, args...)
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
