package ledger

import (
	"context"
	"fmt"
	"strconv"
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
	if len(payees) == 0 {
		return out, nil
	}
	list := make([][4]string, len(payees))
	for i, p := range payees {
		list[i] = [4]string{p.Ref, p.Account, strconv.FormatInt(p.ProviderID, 10), amountText(p.Amount)}
	}
	rows, err := db.sql.QueryContext(ctx, recentPayoutsSQL, jsonList(list), fmtTime(since))
	if err != nil {
		return nil, fmt.Errorf("look for repeats: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var ref string
		p, err := scanPayout(headScanner{rows: rows, head: []any{&ref}})
		if err != nil {
			return nil, fmt.Errorf("look for repeats: %w", err)
		}
		out[ref] = p
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("look for repeats: %w", err)
	}
	return out, nil
}

// recentPayoutsSQL finds the payouts to the payees of its first parameter, a JSON array of
// [ref, account, provider id, amount] strings, recorded at or after its second. jsonb_each hands each
// payee over already parsed, so its four fields are not parsed again for each.
var recentPayoutsSQL = `WITH c(ref, account, provider_id, amount) AS (SELECT value ->> 0, value ->> 1, CAST(value ->> 2 AS INTEGER), value ->> 3 FROM jsonb_each(?))
	SELECT c.ref, ` + plainPayoutColumns + ` FROM c JOIN payouts p INDEXED BY payouts_by_payee
	ON p.account = c.account AND p.provider_id = c.provider_id AND p.amount = c.amount
	WHERE p.created_at >= ? AND p.ref <> c.ref AND p.state NOT IN ('FAILED', 'REJECTED')
	ORDER BY p.created_at`
