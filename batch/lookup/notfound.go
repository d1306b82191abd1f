package lookup

import (
	"context"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/ledger"
)

// NotFound records a "not found" for an UNKNOWN row and does what outcome.AfterNotFound decides:
// look again later, leave it for reconciliation, or, proven never created, make it READY: send,
// for the run, sends it at once; reconcile never sends, and the next run of its file does. A
// single "not found" proves little: the create may still be queued.
func (s *Session) NotFound(ctx context.Context, t Task, p ledger.Payout, now time.Time, send bool) Result {
	count := p.NotFoundCount + 1
	first := p.FirstNotFoundAt
	if first.IsZero() {
		first = now
	}
	if o := s.Apply(ctx, t, outcome.NotFoundCounted(count)); o != nil {
		return *o
	}
	waited := now.Sub(first)
	verdict, at := outcome.AfterNotFound(p, count, first, now, s.cfg.Grace)
	if verdict == outcome.LookAgain {
		return Result{Task: t, ServiceOK: true, Next: &Task{Ref: t.Ref, Kind: LookUp, At: at, GraceEnds: first.Add(s.cfg.Grace.Grace)}}
	}
	reason := ""
	switch {
	case verdict == outcome.KeptUnknown:
		reason = "--no-resend-unknown is set"
	case verdict == outcome.StuckForGood:
		s.noteStuck(p)
		if o := s.Apply(ctx, t, outcome.StuckNoted(p)); o != nil {
			return *o
		}
		s.log.Warn("payout stuck: "+outcome.StuckMessage(t.Ref, p.Attempts), "ref", t.Ref)
		return Result{Task: t, ServiceOK: true, RowDone: true}
	case s.broken.Load():
		reason = "a payout known to exist was reported not found, so \"not found\" proves nothing on this service"
	case !s.Proven(ctx):
		reason = "no lookup of a payout known to exist has worked in this run"
	}
	if reason != "" {
		if o := s.Apply(ctx, t, outcome.NotResent(count, waited, reason)); o != nil {
			return *o
		}
		return Result{Task: t, ServiceOK: true, RowDone: true}
	}
	if o := s.Apply(ctx, t, outcome.NeverCreated(count, waited, send)); o != nil {
		return *o
	}
	if !send {
		return Result{Task: t, ServiceOK: true, RowDone: true}
	}
	return Result{Task: t, ServiceOK: true, Next: &Task{Ref: t.Ref, Kind: Send, At: now}}
}

// RefusalNotFoundTrusted reports whether "not found" may confirm that a refused create created
// nothing. A service may create a payout and still answer "fail", so it is trusted only when no
// payout known to exist was reported not found; when one exists it is looked up first, since a
// confirmed refusal invites paying the row again under a new reference. With no payout known to
// exist there is nothing to check, and the service's refusal and "not found" agree.
func (s *Session) RefusalNotFoundTrusted(ctx context.Context) bool {
	s.Proven(ctx)
	return !s.broken.Load()
}

// Proven checks, once per session, that a lookup by external_invoice_ref finds a payout known
// to exist. Without that, "not found" could mean the lookup itself is broken.
func (s *Session) Proven(ctx context.Context) bool {
	if s.proven.Load() {
		return true
	}
	s.mu.Lock()
	candidates := append([]string(nil), s.known...)
	s.mu.Unlock()
	if len(candidates) == 0 {
		latest := ledger.Filter{States: []ledger.State{ledger.Submitted, ledger.Succeeded}, Latest: 3}
		err := s.cfg.Ledger.WalkPayouts(ctx, latest, latest.Latest, func(p ledger.Payout) error {
			candidates = append(candidates, p.Ref)
			return nil
		})
		if err != nil {
			return false
		}
	}
	for _, ref := range candidates {
		if err := s.cfg.Limiter.Wait(ctx); err != nil {
			return false
		}
		_, err := Get(ctx, s.cfg.Service, ref)
		switch {
		case err == nil:
			s.proven.Store(true)
			return true
		case api.KindOf(err) == api.KindNotFound:
			s.log.Warn("a payout known to exist was not found by external_invoice_ref: unknown outcomes will not be sent again", "ref", ref)
			s.broken.Store(true)
			return false
		}
	}
	return false
}
