package ledger

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// lockedError says that another process holds the ledger, or (File set) the input being paid.
// It unwraps to ErrLocked.
type lockedError struct {
	Path   string // the lock file, on SQLite
	Holder string // what the holder wrote: "pid=N host=H since=T id=X", or empty
	File   string // the SHA-256 of the input another process is paying, on PostgreSQL
	// Waited is how long TakeWithin waited for the holder before it gave up; 0 when it did not.
	Waited time.Duration
}

func (e *lockedError) Error() string {
	holder := e.Holder
	if holder == "" {
		holder = "unknown holder"
	}
	if e.File != "" {
		return fmt.Sprintf("another process is paying this file (SHA-256 %s): %s; it was not paid here: wait for that process to end, or stop it, and run again", e.File, holder)
	}
	if e.Waited > 0 {
		return fmt.Sprintf("%v (%s, lock file %s), still after waiting %s for it (--ledger-wait): is that process stuck?", ErrLocked, holder, e.Path, e.Waited)
	}
	return fmt.Sprintf("%v (%s, lock file %s)", ErrLocked, holder, e.Path)
}

func (e *lockedError) Unwrap() error { return ErrLocked }

// fileLock is the exclusive lock one process holds on a ledger. It is that process's Liveness:
// every process that pays from the ledger holds the lock while it does, so the holder knows that
// the process claiming any payout but its own is gone.
type fileLock struct {
	fl *flock.Flock
	// Process is the holder: the claimant its payouts record (Change.ClaimedBy).
	Process Process
}

// Alive reports whether claimant is the lock's holder.
func (l *fileLock) Alive(_ context.Context, claimant string) (bool, error) {
	return claimant != "" && claimant == l.Process.Claimant(), nil
}

// lockFile takes, without waiting, the lock on ledgerPath+".lock" and writes who holds it into that
// file. It is an flock(2) lock: the kernel releases it when the process dies, so a killed run
// never blocks the next one. When another process holds it, lockFile returns a *lockedError.
func lockFile(ledgerPath string) (*fileLock, error) {
	path := ledgerPath + ".lock"
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o600))
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock ledger: %w", err)
	}
	if !ok {
		b, _ := os.ReadFile(path) // the holder's note is a courtesy: absent, the error still says locked
		return nil, &lockedError{Path: path, Holder: strings.TrimSpace(string(b))}
	}
	self := NewProcess()
	note := fmt.Sprintf("pid=%d host=%s since=%s id=%s\n", self.PID, self.Host, self.Started.Format(time.RFC3339), self.ID)
	if err := os.WriteFile(path, []byte(note), 0o600); err != nil {
		return nil, errors.Join(fmt.Errorf("lock ledger: %w", err), fl.Unlock())
	}
	return &fileLock{fl: fl, Process: self}, nil
}

// unlock releases the lock. The lock file stays: removing it would let a third process lock a
// new file while a second still waits on the old one.
func (l *fileLock) unlock() error {
	if err := l.fl.Unlock(); err != nil {
		return fmt.Errorf("unlock ledger: %w", err)
	}
	return nil
}
