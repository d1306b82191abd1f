package ledger

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Payee is what a possible repeat is matched on: the account, bank and amount of a payout about
// to be recorded under Ref.
type Payee struct {
	Ref        string
	Account    string
	ProviderID int64
	Amount     decimal.Decimal
}

// RecentPayouts returns, for each payee, a payout recorded since then under another reference to
// the same account, bank and amount (the latest one), unless it is known never to pay: FAILED
// or REJECTED. It reads an index, so it costs the same on a ledger of any size.
func (db *DB) RecentPayouts(ctx context.Context, payees []Payee, since time.Time) (map[string]Payout, error) {
	out := make(map[string]Payout)
	const perQuery = 400 // 4 parameters each: well under SQLite's limit
	for start := 0; start < len(payees); start += perQuery {
		chunk := payees[start:min(start+perQuery, len(payees))]
		args := make([]any, 0, 4*len(chunk)+1)
		for _, p := range chunk {
			args = append(args, p.Ref, p.Account, p.ProviderID, amountText(p.Amount))
		}
		args = append(args, fmtTime(since))
		rows, err := db.sql.QueryContext(ctx, recentPayoutsSQL(len(chunk)), args...)
		if err != nil {
			return nil, fmt.Errorf("look for repeats: %w", err)
		}
		for rows.Next() {
			var ref string
			p, err := scanPayout(headScanner{rows: rows, head: []any{&ref}})
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("look for repeats: %w", err)
			}
			out[ref] = p
		}
		err = rows.Err()
		if cerr := rows.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("look for repeats: %w", err)
		}
	}
	return out, nil
}

// recentPayoutsSQL finds the payouts to n payees: parameters ref, account, provider id and
// amount for each, then the earliest creation time.
func recentPayoutsSQL(n int) string {
	return `WITH c(ref, account, provider_id, amount) AS (VALUES (?, ?, ?, ?)` + strings.Repeat(", (?, ?, ?, ?)", n-1) + `)
		SELECT c.ref, ` + plainPayoutColumns + ` FROM c JOIN payouts p INDEXED BY payouts_by_payee
		ON p.account = c.account AND p.provider_id = c.provider_id AND p.amount = c.amount
		WHERE p.created_at >= ? AND p.ref <> c.ref AND p.state NOT IN ('FAILED', 'REJECTED')
		ORDER BY p.created_at`
}
