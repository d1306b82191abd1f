package batch

import (
	"errors"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/read"
)

// Exit codes of `run`, `watch --once` and `reconcile`, defined here once: the command line exits
// with them and folder mode tells files apart by them.
const (
	ExitOK        = 0 // every row was accepted
	ExitAborted   = 1 // the run stopped (ledger, service, signal): running it again resumes it
	ExitUsage     = 2 // usage or configuration error: nothing was done
	ExitRejected  = 3 // the input was rejected: nothing of it was submitted
	ExitAttention = 4 // the run finished, but some rows need attention
	// ExitAwaitingApproval: nothing was paid, the file's plan lacks the signatures the ledger's policy asks for.
	ExitAwaitingApproval = 5
)

// ResumeAdvice is what to do about a run that stopped for err before it could resume: running it
// again resumes it, but a refused token would be refused again until it is corrected.
func ResumeAdvice(err error) string {
	if errors.Is(err, outcome.ErrUnauthorized) || api.KindOf(err) == api.KindUnauthorized {
		return "correct the token (" + outcome.AuthHint + "), then run the same command again to resume"
	}
	return "run the same command again to resume"
}

// ErrorExit is the exit code of a run that returned err instead of a Result. The input is at
// fault (ExitRejected) when the file was refused as a whole, or a row or the file could not be
// read: fixing the file is what to do, and running it again as it is would fail the same way.
// Anything else (the ledger, the service, a signal) is the infrastructure's (ExitAborted): the
// ledger holds what was done, and running it again resumes.
func ErrorExit(err error) int {
	var fileErr *FileError
	var rowErr *read.RowError
	var inErr *read.InputError
	if errors.As(err, &fileErr) || errors.As(err, &rowErr) || errors.As(err, &inErr) {
		return ExitRejected
	}
	return ExitAborted
}

// WorseExit picks the exit code that matters more: aborted, then usage, rejected, attention,
// awaiting approval, ok.
func WorseExit(a, b int) int {
	rank := func(code int) int {
		switch code {
		case ExitOK:
			return 0
		case ExitAwaitingApproval:
			return 1
		case ExitAttention:
			return 2
		case ExitRejected:
			return 3
		case ExitUsage:
			return 4
		}
		return 5 // aborted, or a code nobody expected
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}
