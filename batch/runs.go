package batch

import (
	"context"
	"time"

	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/ledger"
)

// RunBook is what opening and closing a run records: the run itself. A run's ledger.RunWrites
// and a reconciliation's ledger.ReconcileStore are each one.
type RunBook interface {
	AddRun(ctx context.Context, r ledger.Run) error
	FinishRun(ctx context.Context, id string, status ledger.RunStatus, exitCode int, ended time.Time) error
}

// OpenRun records run, a file's run or a reconciliation, as running from its StartedAt: until
// CloseRun, it is one still at work, or one whose process is gone.
func OpenRun(ctx context.Context, db RunBook, run ledger.Run) error {
	run.Status = ledger.RunRunning
	return db.AddRun(ctx, run)
}

// CloseRun records that the run id ended at ended with exit, in the status ClosedAs says.
func CloseRun(ctx context.Context, db RunBook, id string, exit int, ended time.Time) error {
	return db.FinishRun(ctx, id, ClosedAs(exit), exit, ended)
}

// ClosedAs is the status of a run that ended with exit: aborted when exit is exitcode.Aborted, else
// finished, its exit code saying how it went.
func ClosedAs(exit int) ledger.RunStatus {
	if exit == exitcode.Aborted {
		return ledger.RunAborted
	}
	return ledger.RunFinished
}

// closeInterruptedRuns marks runs still "running" as interrupted: whoever ran them is gone (on
// SQLite this process holds the ledger's lock), unless files says another process is paying the
// run's file now (a ledger several processes pay from). Their rows are resumed by the row states,
// not by the run.
func closeInterruptedRuns(ctx context.Context, db ledger.RunWrites, files FileKeeper, now time.Time) error {
	runs, err := db.FindRuns(ctx, ledger.RunFilter{Status: ledger.RunRunning})
	if err != nil {
		return err
	}
	for _, run := range runs {
		if files != nil && run.FileSHA256 != "" {
			running, err := files.OthersPay(ctx, run.FileSHA256)
			if err != nil {
				return err
			}
			if running {
				continue
			}
		}
		if err := db.FinishRun(ctx, run.ID, ledger.RunInterrupted, exitcode.Aborted, now); err != nil {
			return err
		}
	}
	return nil
}
