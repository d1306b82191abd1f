package ledger

import (
	"context"
	"errors"
	"strings"
	"time"
)

// Hold is a paying process's hold on its ledger, taken before it opens the ledger to pay and kept
// until it ends: it names the process its claims record, tells whether the process another
// claim names still runs, and keeps a second process off a file being paid. On SQLite it is the
// file lock, which keeps every other paying process off the whole ledger; on
// PostgreSQL a session of the process's own, whose advisory locks end when the process does.
type Hold interface {
	Liveness
	// Self is the process holding it: the claimant its payouts record (Change.ClaimedBy).
	Self() Process
	// PayFile keeps every other process off the input whose SHA-256 is given, until DonePaying or
	// the hold's end: another process paying it gets an error that is ErrLocked (errors.Is),
	// naming the holder.
	PayFile(ctx context.Context, fileSHA256 string) error
	// DonePaying lets other processes pay the file again, once the run that called PayFile has
	// ended: a later run of it resumes from the ledger. A long-lived process (folder mode) so
	// holds only the files it is paying.
	DonePaying(ctx context.Context, fileSHA256 string) error
	// OthersPay reports whether another process is paying the file now (never while this one
	// holds it): a run of it that the ledger shows running is that process's, not interrupted.
	OthersPay(ctx context.Context, fileSHA256 string) (bool, error)
	Fence
	Close() error
}

// Fence is what a process proves right before each request that may create a payout: that it
// still holds the claims its SUBMITTING payouts record, so that no other process has taken them
// over. The service takes no fencing token, so the proof is made on the sender's side.
type Fence interface {
	// Confirm returns nil when the process holds its claims now, proved by a round trip to the
	// ledger; otherwise an error, and nothing may be sent.
	Confirm(ctx context.Context) error
	// Held reports, without asking the ledger, whether the last proof is recent enough to send
	// on (a lease on a clock that counts pauses); when it is not, Confirm again.
	Held() bool
}

// IsURL says whether a ledger is named by a postgres:// (or postgresql://) URL rather than a
// path to a SQLite file.
func IsURL(ledger string) bool {
	return strings.HasPrefix(ledger, "postgres://") || strings.HasPrefix(ledger, "postgresql://")
}

// Take takes the hold a paying process keeps on ledger, without waiting: on SQLite the file lock
// (another holder: ErrLocked, naming it); on PostgreSQL a session of the process's own, which
// other processes share the ledger with.
func Take(ctx context.Context, ledger string) (Hold, error) {
	if IsURL(ledger) {
		return takePostgres(ctx, ledger)
	}
	return lockFile(ledger)
}

// TakeWithin is Take, waiting up to wait for another process to release a SQLite ledger's lock:
// it tries again every lockRetry, and calls waiting, if given, once with the holder's note before
// it first waits. When the wait runs out its ErrLocked says how long it waited; when ctx ends
// first, ctx's error. A PostgreSQL ledger is shared and never waited for here.
func TakeWithin(ctx context.Context, ledger string, wait time.Duration, waiting func(holder string)) (Hold, error) {
	h, err := Take(ctx, ledger)
	var locked *lockedError
	if wait <= 0 || !errors.As(err, &locked) {
		return h, err
	}
	if waiting != nil {
		waiting(locked.Holder)
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	retry := time.NewTicker(lockRetry)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-deadline.C:
			locked.Waited = wait
			return nil, locked
		case <-retry.C:
		}
		h, err = Take(ctx, ledger)
		if !errors.As(err, &locked) {
			return h, err
		}
	}
}

// lockRetry is how often TakeWithin tries a held lock again.
const lockRetry = 200 * time.Millisecond

// Self is the lock's holder.
func (l *fileLock) Self() Process { return l.Process }

// PayFile does nothing more: the file lock already keeps every other paying process off the
// whole ledger, and so off every file.
func (l *fileLock) PayFile(context.Context, string) error { return nil }

// DonePaying does nothing: PayFile took nothing.
func (l *fileLock) DonePaying(context.Context, string) error { return nil }

// OthersPay is false: the file lock keeps every other paying process off the ledger.
func (l *fileLock) OthersPay(context.Context, string) (bool, error) { return false, nil }

// Confirm is always nil: the file lock is the kernel's, kept for as long as the process lives,
// however long it is paused, and no other process can take a claim over while it is held.
func (l *fileLock) Confirm(context.Context) error { return nil }

// Held is always true, as Confirm is always nil.
func (l *fileLock) Held() bool { return true }

// Close releases the lock.
func (l *fileLock) Close() error { return l.unlock() }
