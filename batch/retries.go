package batch

import (
	"context"
	"time"

	"github.com/payout/payout/batch/retry"
	"github.com/payout/payout/ledger"
)

// RetryColumn is the column a retry file adds after the input's own: why each row is there.
const RetryColumn = retry.Column

// WhyUnknown begins the reason of a row whose outcome is unknown, in a retry file.
const WhyUnknown = retry.WhyUnknown

// RetryRef is the n-th reference derived from root to pay again a payout refused under it.
func RetryRef(root string, n int) string { return retry.Ref(root, n) }

// RetryFile is a retry file written, and how many rows it holds.
type RetryFile = retry.File

// WriteRetryFile writes the retry file of a run into dir (retry.Write).
func WriteRetryFile(ctx context.Context, db *ledger.DB, runID, dir, name string, fileRejected bool, stamp time.Time) (RetryFile, error) {
	return retry.Write(ctx, db, runID, dir, name, fileRejected, stamp)
}
