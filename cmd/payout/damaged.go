package main

import (
	"fmt"
	"path/filepath"

	"github.com/payout/payout/ledger"
)

// restoreAdvice is what to do about a damaged ledger: nothing the program does can repair it.
func restoreAdvice(path string) string {
	return fmt.Sprintf("Restore the last backup of the ledger, or salvage what is readable with `sqlite3 %s .recover | sqlite3 recovered.db` and point --ledger at recovered.db; then run `payout reconcile` before paying again",
		path)
}

// damagedStop is the error of a command stopped by damage that SQLite found on a page it read
// after the ledger was opened: exit 1, since what was done so far is recorded, but running again
// cannot help. It returns nil when err is not such damage.
func damagedStop(what, ledgerPath string, err error) error {
	if !ledger.Damaged(err) {
		return nil
	}
	if ledger.IsURL(ledgerPath) {
		ledgerPath = ledger.Redact(ledgerPath)
	} else if abs, aerr := filepath.Abs(ledgerPath); aerr == nil {
		ledgerPath = abs
	}
	return &exitError{code: exitAborted, err: fmt.Errorf("%s stopped: the ledger %s is damaged (%v); running again cannot fix it. %s",
		what, ledgerPath, err, restoreAdvice(ledgerPath))}
}
