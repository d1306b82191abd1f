package batch

import (
	"context"
	"time"

	"github.com/payout/payout/batch/retry"
	"github.com/payout/payout/ledger"
)

// RetryFile is a retry file written, and how many rows it holds.
type RetryFile = retry.File

// WriteRetryFile writes the retry file of a run into dir (retry.Write).
func WriteRetryFile(ctx context.Context, db *ledger.DB, runID, dir, name string, fileRejected bool, stamp time.Time) (RetryFile, error) {
	return retry.Write(ctx, db, runID, dir, name, fileRejected, stamp)
}
