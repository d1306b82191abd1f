package ledger

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"time"
)

// Process is one process that pays from the ledger, as its claims name it: a payout it moved to
// SUBMITTING is its own to finish while it runs, and nobody else's to send or look up.
type Process struct {
	Host    string
	PID     int
	Started time.Time
	ID      string // random: a host's pids are reused
}

// NewProcess is this process's identity, started now.
func NewProcess() Process {
	host, _ := os.Hostname() // a courtesy for people: the random ID is what tells processes apart
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand's Read never fails
	return Process{Host: host, PID: os.Getpid(), Started: time.Now().UTC(), ID: hex.EncodeToString(b)}
}

// Claimant is the process as Change.ClaimedBy and Payout.ClaimedBy name it.
func (p Process) Claimant() string {
	return fmt.Sprintf("host=%s pid=%d started=%s id=%s", p.Host, p.PID, p.Started.UTC().Format(time.RFC3339), p.ID)
}

// Liveness tells whether the process a claim names still runs: each paying process names itself
// in the payouts it moves to SUBMITTING (Change.ClaimedBy), and a start recovers only those whose
// process is gone. An engine's lock held for a process's lifetime fills it (Hold): on SQLite the
// file lock, whose holder knows every other paying process is gone.
type Liveness interface {
	// Alive reports whether claimant is a process that still runs. A claimant it cannot tell
	// about must be reported alive: its rows are then left alone, never sent twice.
	Alive(ctx context.Context, claimant string) (bool, error)
}
