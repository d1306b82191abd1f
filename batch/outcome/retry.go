package outcome

import (
	"fmt"

	"github.com/payout/payout/ledger"
)

// RetryLinked records that the payout r.New, just recorded READY by run runID, pays again r.Old,
// which the service refused with nothing created: its retry_of, and an event in its trail naming
// the payout it replaces. Its state is unchanged. The link and its event are one change, so that
// the trail never lacks the event of a link.
func RetryLinked(r ledger.Retry, runID string) ledger.Change {
	return ledger.Change{Ref: r.New, From: ledger.Ready, To: ledger.Ready, RunID: runID, RetryOf: r.Old,
		Detail: fmt.Sprintf("a retry of %s, which the service refused with nothing created (offered by the retry file of run %s)", r.Old, r.RunID)}
}
