package main

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/payout/payout/ledger"
)

// lostHold is a hold whose session can be lost at will.
type lostHold struct {
	ledger.Hold
	lost chan struct{}
}

func (h lostHold) Lost() <-chan struct{} { return h.lost }

func TestGuardStopsTheCommandWhenItsHoldLosesItsSession(t *testing.T) {
	t.Parallel()
	h := lostHold{lost: make(chan struct{})}
	s := &session{lock: h, log: slog.New(slog.DiscardHandler)}
	ctx, stop := s.guard(context.Background())
	defer stop()
	if err := holdLost(ctx); err != nil || ctx.Err() != nil {
		t.Fatalf("before the session is lost: %v, %v", err, ctx.Err())
	}
	close(h.lost)
	<-ctx.Done()
	if err := holdLost(ctx); exitCodeOf(err) != exitAborted || !errors.Is(err, errHoldLost) {
		t.Errorf("once it is lost: %v, want exit %d for a lost session", err, exitAborted)
	}

	fileLock, err := ledger.Take(context.Background(), filepath.Join(t.TempDir(), "payout-ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer fileLock.Close()
	sqlite := &session{lock: fileLock, log: slog.New(slog.DiscardHandler)}
	ctx, stop = sqlite.guard(context.Background())
	stop()
	if err := holdLost(ctx); err != nil {
		t.Errorf("a command that ended with a file lock: %v", err)
	}
}
