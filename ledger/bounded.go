package ledger

import (
	"strings"
)

// The queries here read through an index and return what they are asked for, not the whole
// ledger: the run and reconcile paths and `payout status` call them, and must cost the same
// after years of payouts as on the first day.

// prefixed qualifies every column of a comma-separated list with prefix.
func prefixed(prefix, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = prefix + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}
