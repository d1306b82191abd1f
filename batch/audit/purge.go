package audit

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/ledger"
)

// MaskName is the form a name keeps after purge: its first letter and "***".
func MaskName(name string) string {
	r, size := utf8.DecodeRuneInString(name)
	if size == 0 || r == utf8.RuneError {
		return "***"
	}
	return string(r) + "***"
}

// Purge masks the names and account numbers of the final payouts last changed before the start
// of day (UTC) of before, as ledger.Purge describes; account numbers keep their last four digits
// (outcome.MaskAccount). The payouts that are not final are left, and listed in the result.
// Emptying SQLite's -wal waits up to walWait for other processes to stop reading it.
func Purge(ctx context.Context, db ledger.AuditStore, before time.Time, walWait time.Duration) (ledger.PurgeResult, error) {
	day := time.Date(before.Year(), before.Month(), before.Day(), 0, 0, 0, 0, time.UTC)
	return db.Purge(ctx, ledger.PurgeRequest{Before: day, MaskName: MaskName, MaskAccount: outcome.MaskAccount,
		Detail: "purge --before " + day.Format(time.DateOnly) + ": name and account number masked", WALWait: walWait})
}
