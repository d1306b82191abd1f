package send

import (
	"context"
	"errors"
	"sync"

	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/ledger"
)

// State is what the runs of one process share: how many of them are sending, and the proof of
// the run being sent.
type State struct {
	sending sending
	proofs  proofs
}

// NewState is the State of a process none of whose runs is sending yet.
func NewState() *State { return &State{} }

// sending counts the runs of this process (Config.Process) that are sending. A payout this
// process claimed is its own to finish only while one of them runs: once none does, a run that
// stopped (its answer not recorded) left it, and the next start recovers it as it would a dead
// process's.
type sending struct {
	mu sync.Mutex // held from a start's recovery to its count: no run claims a payout between them
	n  int
}

// Recover marks rows left SUBMITTING by a process that died between recording its
// intent and recording the answer: their POST may or may not have reached the service. Rows
// whose process cfg.Liveness says still runs are that process's to finish, and are left alone;
// so are this process's own while one of its runs is sending.
func Recover(ctx context.Context, cfg Config, runID string) error {
	cfg.State.sending.mu.Lock()
	defer cfg.State.sending.mu.Unlock()
	return recoverOrphans(ctx, cfg, runID)
}

// start recovers what is orphaned, as Recover does, and counts a run of this
// process as sending; the returned func ends it.
func start(ctx context.Context, cfg Config, runID string) (func(), error) {
	s := &cfg.State.sending
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := recoverOrphans(ctx, cfg, runID); err != nil {
		return nil, err
	}
	s.n++
	return func() {
		s.mu.Lock()
		s.n--
		s.mu.Unlock()
	}, nil
}

// recoverOrphans makes the orphaned SUBMITTING rows UNKNOWN; cfg.State.sending.mu is held.
func recoverOrphans(ctx context.Context, cfg Config, runID string) error {
	alive := ownRuns{Liveness: cfg.Liveness, self: cfg.Process, busy: cfg.State.sending.n > 0}
	orphans, err := cfg.Ledger.Orphaned(ctx, alive)
	if err != nil {
		return err
	}
	inFlight := ""
	if cfg.InFlightHold > 0 {
		inFlight = "at least " + cfg.InFlightHold.String()
	}
	for _, p := range orphans {
		err := cfg.Ledger.Apply(ctx, outcome.Orphaned(p, runID, inFlight))
		if errors.Is(err, ledger.ErrStateConflict) {
			// Another process starting at the same moment recovered it first, or its claimant
			// recorded the answer after all: either way it is no longer SUBMITTING, and no
			// longer this start's to recover.
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// ownRuns is a Liveness as a start of this process sees it: its own claims live while one of its
// runs is sending (busy), whatever the process's liveness says.
type ownRuns struct {
	ledger.Liveness
	self string
	busy bool
}

func (o ownRuns) Alive(ctx context.Context, claimant string) (bool, error) {
	if claimant == o.self {
		return o.busy, nil
	}
	return o.Liveness.Alive(ctx, claimant)
}
