package outcome

import (
	"errors"
	"fmt"

	"github.com/payout/payout/ledger"
)

// ErrReleaseRefused is returned (wrapped, with why) when a release leaves the payout as it is.
var ErrReleaseRefused = errors.New("release refused")

// Releasable says, wrapping ErrReleaseRefused, why a person may not release p: only a payout
// whose outcome is unknown is released (and only once a lookup does not find it).
func Releasable(p ledger.Payout) error {
	if p.State != ledger.Unknown {
		return fmt.Errorf("%w: payout %s is %s: only a payout whose outcome is unknown is released", ErrReleaseRefused, p.Ref, p.State)
	}
	return nil
}

// Released makes an UNKNOWN payout that a lookup did not find READY again, decided by actor
// for reason. The count of sends starts again: kept at MaxSendAttempts, one more 503 would leave
// the released row stuck after a single send. The event keeps how many there were.
func Released(p ledger.Payout, actor, reason string) ledger.Change {
	return ledger.Change{Ref: p.Ref, From: ledger.Unknown, To: ledger.Ready, ResetNotFound: true, ResetAttempts: true,
		Error: fmt.Sprintf("released by %s: %s", actor, reason),
		Detail: fmt.Sprintf("released by %s after %d sends with no answer, not found by external_invoice_ref: %s; the next runs of its file may send it up to %d more times",
			actor, p.Attempts, reason, MaxSendAttempts)}
}
