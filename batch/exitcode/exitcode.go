// Package exitcode is the exit codes of `run`, `watch --once` and `reconcile`, defined once: the
// command line exits with them and folder mode tells files apart by them.
package exitcode

import (
	"errors"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/read"
)

const (
	OK        = 0 // every row was accepted
	Aborted   = 1 // the run stopped (ledger, service, signal): running it again resumes it
	Usage     = 2 // usage or configuration error: nothing was done
	Rejected  = 3 // the input was rejected: nothing of it was submitted
	Attention = 4 // the run finished, but some rows need attention
	// AwaitingApproval: nothing was paid, the file's plan lacks the signatures the ledger's policy asks for.
	AwaitingApproval = 5
)

// ResumeAdvice is what to do about a run that stopped for err before it could resume: running it
// again resumes it, but a refused token would be refused again until it is corrected.
func ResumeAdvice(err error) string {
	if errors.Is(err, outcome.ErrUnauthorized) || api.KindOf(err) == api.KindUnauthorized {
		return "correct the token (" + outcome.AuthHint + "), then run the same command again to resume"
	}
	return "run the same command again to resume"
}

// OfError is the exit code of a run that returned err instead of a result. The input is at
// fault (Rejected) when the file was refused as a whole, or a row or the file could not be
// read: fixing the file is what to do, and running it again as it is would fail the same way.
// Anything else (the ledger, the service, a signal) is the infrastructure's (Aborted): the
// ledger holds what was done, and running it again resumes.
func OfError(err error) int {
	var fileErr *read.FileError
	var rowErr *read.RowError
	var inErr *read.InputError
	if errors.As(err, &fileErr) || errors.As(err, &rowErr) || errors.As(err, &inErr) {
		return Rejected
	}
	return Aborted
}

// Worse picks the exit code that matters more: aborted, then usage, rejected, attention,
// awaiting approval, ok.
func Worse(a, b int) int {
	rank := func(code int) int {
		switch code {
		case OK:
			return 0
		case AwaitingApproval:
			return 1
		case Attention:
			return 2
		case Rejected:
			return 3
		case Usage:
			return 4
		}
		return 5 // aborted, or a code nobody expected
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}
