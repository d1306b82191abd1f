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

// Liveness tells whether the process a claim names still runs. An engine's lock held for a
// process's lifetime fills it: on SQLite the file lock, whose holder knows every other
// paying process is gone.
type Liveness interface {
	// Alive reports whether claimant is a process that still runs. A claimant it cannot tell
	// about must be reported alive: its rows are then left alone, never sent twice.
	Alive(ctx context.Context, claimant string) (bool, error)
}

// OnlySelf is the liveness a process knows when it is the ledger's only payer (it holds the file
// lock, or it is a test's one runner): the claimant it names runs, every other one is gone.
type OnlySelf string

// Alive reports whether claimant is s itself.
func (s OnlySelf) Alive(_ context.Context, claimant string) (bool, error) {
	return claimant != "" && claimant == string(s), nil
}

// Orphaned lists the SUBMITTING payouts whose claimant alive says is gone (or that name none):
// their POST may or may not have reached the service, and they are to be looked up before
// anything is sent again. A payout claimed by a live process is not listed. alive is asked once
// per claimant.
func (db *DB) Orphaned(ctx context.Context, alive Liveness) ([]Payout, error) {
	submitting, err := db.List(ctx, Filter{States: []State{Submitting}})
	if err != nil {
		return nil, err
	}
	gone := make(map[string]bool)
	var out []Payout
	for _, p := range submitting {
		dead, asked := gone[p.ClaimedBy]
		if !asked {
			live, err := alive.Alive(ctx, p.ClaimedBy)
			if err != nil {
				return nil, fmt.Errorf("is %s alive: %w", orUnclaimed(p.ClaimedBy), err)
			}
			dead = !live || p.ClaimedBy == ""
			gone[p.ClaimedBy] = dead
		}
		if dead {
			out = append(out, p)
		}
	}
	return out, nil
}

// orUnclaimed names a claimant for people, or says there is none.
func orUnclaimed(claimant string) string {
	if claimant == "" {
		return "no recorded process"
	}
	return "process " + claimant
}
