package send

import (
	"context"
	"errors"
	"fmt"
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
	orphans, err := orphaned(ctx, cfg.Ledger, alive)
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

// orphansPage is how many SUBMITTING payouts orphaned reads at a time: a page is held in memory
// while it asks about their claimants, with no read open.
const orphansPage = 500

// orphaned lists the SUBMITTING payouts whose claimant alive says is gone, or that name none (they
// were claimed before claims named their process, and no process finishes them): their POST may
// or may not have reached the service, and they are to be looked up before anything is sent
// again. A payout claimed by a live process is not listed. alive is asked once per claimant.
func orphaned(ctx context.Context, db Ledger, alive ledger.Liveness) ([]ledger.Payout, error) {
	gone := make(map[string]bool)
	var out []ledger.Payout
	err := db.WalkPayouts(ctx, ledger.Filter{States: []ledger.State{ledger.Submitting}}, orphansPage, func(p ledger.Payout) error {
		dead, asked := gone[p.ClaimedBy]
		if !asked {
			live, err := alive.Alive(ctx, p.ClaimedBy)
			if err != nil {
				return fmt.Errorf("is %s alive: %w", orUnclaimed(p.ClaimedBy), err)
			}
			dead = !live || p.ClaimedBy == ""
			gone[p.ClaimedBy] = dead
		}
		if dead {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
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
