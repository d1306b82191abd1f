package main

import (
	"context"
)

// guard is ctx, cancelled when the ledger's hold loses its session (PostgreSQL: the server
// restarted, or gave up on this host): the process's locks went with it, and other processes now
// take it for gone, so it stops paying as on a signal; a rerun resumes from the ledger. The
// returned func releases what guard started.
func (s *session) guard(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	lost, ok := s.lock.(interface{ Lost() <-chan struct{} })
	if !ok {
		return ctx, cancel
	}
	go func() {
		select {
		case <-lost.Lost():
			s.log.Error("the ledger's session is gone, and the locks of this process with it: stopping; run again to resume")
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
