package main

import (
	"context"
	"errors"
)

// errHoldLost is why a command stopped when its ledger's hold lost its session.
var errHoldLost = errors.New("the PostgreSQL ledger's session of this process is gone, and its locks with it (server restarted, or it stopped answering): stopped as on a signal; run again to resume")

// guard is ctx, cancelled with errHoldLost as its cause when the ledger's hold loses its session
// (PostgreSQL): other processes now take this one for gone, so it stops paying as on a signal,
// and a rerun resumes from the ledger. The returned func releases what guard started.
func (s *session) guard(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := func() { cancel(nil) }
	lost, ok := s.lock.(interface{ Lost() <-chan struct{} })
	if !ok {
		return ctx, stop
	}
	go func() {
		select {
		case <-lost.Lost():
			s.log.Error(errHoldLost.Error())
			cancel(errHoldLost)
		case <-ctx.Done():
		}
	}()
	return ctx, stop
}

// holdLost is the error of a command whose ctx guard cancelled for a lost session, or nil.
func holdLost(ctx context.Context) error {
	if errors.Is(context.Cause(ctx), errHoldLost) {
		return &exitError{code: exitAborted, err: errHoldLost}
	}
	return nil
}

// holdIsLost reports whether the ledger's hold has lost its session (PostgreSQL).
func (s *session) holdIsLost() bool {
	lost, ok := s.lock.(interface{ Lost() <-chan struct{} })
	if !ok {
		return false
	}
	select {
	case <-lost.Lost():
		return true
	default:
		return false
	}
}
