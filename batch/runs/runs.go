// Package runs keeps a run as the ledger records it: opened and closed, and read back, a row at a
// time, for its reports, `payout report`, folder mode, evidence packs and the console.
package runs

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/runid"
	"github.com/payout/payout/ledger"
)

// RunBook is what opening and closing a run records: the run itself. A run's ledger.RunWrites
// and a reconciliation's ledger.ReconcileStore are each one.
type RunBook interface {
	AddRun(ctx context.Context, r ledger.Run) error
	FinishRun(ctx context.Context, id string, status ledger.RunStatus, exitCode int, ended time.Time) error
}

// Open records run, a file's run or a reconciliation, as running from its StartedAt: until
// Close, it is one still at work, or one whose process is gone.
func Open(ctx context.Context, db RunBook, run ledger.Run) error {
	run.Status = ledger.RunRunning
	return db.AddRun(ctx, run)
}

// Close records that the run id ended at ended with exit, in the status ClosedAs says.
func Close(ctx context.Context, db RunBook, id string, exit int, ended time.Time) error {
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

// Payers tells whether another process pays a file now (ledger.Hold is one).
type Payers interface {
	OthersPay(ctx context.Context, fileSHA256 string) (bool, error)
}

// CloseInterrupted marks runs still "running" as interrupted: whoever ran them is gone (on
// SQLite this process holds the ledger's lock), unless files says another process is paying the
// run's file now (a ledger several processes pay from). Their rows are resumed by the row states,
// not by the run.
func CloseInterrupted(ctx context.Context, db ledger.RunWrites, files Payers, now time.Time) error {
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

// SameInput reports whether an earlier run paid this same file: its input had the same SHA-256
// (the same bytes, whatever the name), or the same file name while that run had not finished
// with every row accepted (a row corrected and the file run again, or a stopped run resumed).
// Other bytes under the name of a run that had finished with everything accepted are another
// file: a new period exported under last period's name must be told, not skipped in silence.
// Folder mode's renaming of a name already taken (a ".20261124T051011Z" or ".20261124T051011Z-2"
// before the extension) is ignored, and case too.
func SameInput(run ledger.Run, path, sum string) bool {
	if run.FileSHA256 != "" && run.FileSHA256 == sum {
		return true
	}
	return !Completed(run) && strings.EqualFold(Unstamped(run.File), Unstamped(path))
}

// Completed reports whether run is a run of a file that finished with every row accepted (exit
// 0): the one test, for the run and folder mode, of a file paid whole.
func Completed(run ledger.Run) bool {
	return run.Kind == ledger.KindRun && run.Status == ledger.RunFinished && run.ExitCode == exitcode.OK
}

// stampPattern is the timestamp folder mode (package watch) puts before the extension of a name
// already taken: ".20261124T051011Z", or ".20261124T051011Z-2" and on within one second.
var stampPattern = regexp.MustCompile(`\.` + runid.StampPattern + `(-\d+)?$`)

// Unstamped is the base name of path without folder mode's timestamp: the name its file was
// dropped under.
func Unstamped(path string) string {
	name := filepath.Base(path)
	ext := filepath.Ext(name)
	return stampPattern.ReplaceAllString(strings.TrimSuffix(name, ext), "") + ext
}
