package ledger

import (
	"context"
	"fmt"
	"strconv"
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
	if len(payees) == 0 {
		return out, nil
	}
	list := make([][4]string, len(payees))
	for i, p := range payees {
		list[i] = [4]string{p.Ref, p.Account, strconv.FormatInt(p.ProviderID, 10), amountText(p.Amount)}
	}
	rows, err := db.sql.QueryContext(ctx, db.eng.recentPayoutsSQL(), jsonList(list), fmtTime(since))
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
// [ref, account, provider id, amount] strings, recorded at or after its second. Accounts match
// without their leading zeros (AccountDigits). jsonElements hands each
// payee over already parsed, so its four fields are not parsed again for each.
func (e *engine) recentPayoutsSQL() string {
	return `WITH c(ref, account, provider_id, amount) AS (SELECT value ->> 0, value ->> 1, CAST(value ->> 2 AS INTEGER), value ->> 3 FROM ` + e.jsonElements("$1") + `)
	SELECT c.ref, ` + plainPayoutColumns + ` FROM c JOIN payouts p` + e.indexedBy("payouts_by_payee_digits") + `
	ON ltrim(p.account, '0') = ltrim(c.account, '0') AND p.provider_id = c.provider_id AND p.amount = c.amount
	WHERE p.created_at >= $2 AND p.ref <> c.ref AND p.state NOT IN ('FAILED', 'REJECTED')
	ORDER BY p.created_at`
}

// RecentPayees is the accounts, each with its bank, of the payouts recorded since a time that may
// pay (not FAILED or REJECTED), held by a caller that checks many payees for repeats: a payee
// whose account it lacks (r[PaidAccount{AccountDigits(account), provider}] is false) has no
// recent payout, and needs no lookup (RecentPayouts says whether the others repeat one).
type RecentPayees map[PaidAccount]bool

// PaidAccount is an account at a bank as RecentPayees holds it: its number without its leading
// zeros (AccountDigits), and the bank's provider.
type PaidAccount struct {
	Digits     string
	ProviderID int64
}

// RecentPayees reads the accounts paid since then, or returns nil when more than limit payouts
// were recorded since: reading them would cost more than looking the caller's payees up.
func (db *DB) RecentPayees(ctx context.Context, since time.Time, limit int) (RecentPayees, error) {
	rows, err := db.sql.QueryContext(ctx, db.eng.recentPayeesSQL(), fmtTime(since), limit+1)
	if err != nil {
		return nil, fmt.Errorf("read recent payees: %w", err)
	}
	defer rows.Close()
	r := make(RecentPayees)
	for n := 0; rows.Next(); n++ {
		if n == limit {
			return nil, nil
		}
		var a PaidAccount
		var state State
		if err := rows.Scan(&a.Digits, &a.ProviderID, &state); err != nil {
			return nil, fmt.Errorf("read recent payees: %w", err)
		}
		if state != Failed && state != Rejected {
			a.Digits = AccountDigits(a.Digits)
			r[a] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read recent payees: %w", err)
	}
	return r, nil
}

// AccountDigits is an account number without its leading zeros: the repeat guard takes two
// accounts that differ only there for the same, since a spreadsheet may have dropped the zeros
// and a bank may read both alike. Paying keeps the account as written.
func AccountDigits(account string) string { return strings.TrimLeft(account, "0") }

// recentPayeesSQL reads at most its second parameter of the payouts recorded at or after its first.
func (e *engine) recentPayeesSQL() string {
	return `SELECT account, provider_id, state FROM payouts` + e.indexedBy("payouts_by_created") + `
	WHERE created_at >= $1 LIMIT $2`
}
