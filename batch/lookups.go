package batch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/ledger"
)

// lookups is what the run and reconcile share while they look payouts up: the ledger run their
// changes are recorded under, and whether lookups by external_invoice_ref are proven to work.
type lookups struct {
	r      *Runner
	log    *slog.Logger
	runID  string
	proven atomic.Bool // a lookup by external_invoice_ref found a payout in this run
	broken atomic.Bool // a payout known to exist was reported not found: lookups prove nothing
	mu     sync.Mutex
	known  []string      // refs accepted by the service in this run, for proving lookups work
	stuck  []StuckPayout // rows found stuck (see Stuck) in this run
	// account, when set, gives the account number of a payout in hand, for the debug log.
	account func(ref string) (string, bool)
}

// settledByCallback turns a state conflict into "done": only a callback moves rows beside a run
// (the run holds the ledger's lock), and only towards SUCCEEDED, so the row has its answer.
func (s *lookups) settledByCallback(o taskResult) taskResult {
	if o.Fatal != nil && errors.Is(o.Fatal, ledger.ErrStateConflict) {
		s.log.Info("payout moved by a callback while this task handled it", "ref", o.Task.ref, "err", o.Fatal.Error())
		return taskResult{Task: o.Task, ServiceOK: o.ServiceOK, RowDone: true}
	}
	return o
}

func (s *lookups) apply(ctx context.Context, t task, changes ...ledger.Change) *taskResult {
	for i := range changes {
		changes[i].Ref, changes[i].RunID = t.ref, s.runID
	}
	if err := s.r.cfg.Ledger.Apply(ctx, changes...); err != nil {
		return &taskResult{Task: t, Fatal: fmt.Errorf("record %s: %w", t.ref, err)}
	}
	if s.log.Enabled(ctx, slog.LevelDebug) {
		s.logChanges(ctx, t.ref, changes)
	}
	return nil
}

// logChanges logs, at debug level, the changes recorded for one payout, its account masked.
func (s *lookups) logChanges(ctx context.Context, ref string, changes []ledger.Change) {
	account := ""
	if s.account != nil {
		if a, ok := s.account(ref); ok {
			account = MaskAccount(a)
		}
	}
	for _, c := range changes {
		what := c.Detail
		if what == "" {
			what = c.Error
		}
		s.log.DebugContext(ctx, "payout "+string(c.From)+" -> "+string(c.To), "ref", ref, "account", account, "detail", what)
	}
}

// rateLimited is rateLimitedRetry with the run's backoffs.
func (s *lookups) rateLimited(err error, t task, now time.Time) (time.Duration, *task) {
	return rateLimitedRetry(err, t, now, s.r.backoffs())
}

func (s *lookups) remember(ref string) {
	s.mu.Lock()
	if len(s.known) < 16 {
		s.known = append(s.known, ref)
	}
	s.mu.Unlock()
}

func (s *lookups) noteStuck(p ledger.Payout) {
	s.mu.Lock()
	s.stuck = append(s.stuck, StuckPayout{Ref: p.Ref, Attempts: p.Attempts})
	s.mu.Unlock()
}

// notFound records a "not found" for an UNKNOWN row and does what outcome.AfterNotFound decides:
// look again later, leave it for reconciliation, or, proven never created, make it READY: send,
// for the run, sends it at once; reconcile never sends, and the next run of its file does. A
// single "not found" proves little: the create may still be queued.
func (s *lookups) notFound(ctx context.Context, t task, p ledger.Payout, now time.Time, send bool) taskResult {
	cfg := s.r.cfg
	count := p.NotFoundCount + 1
	first := p.FirstNotFoundAt
	if first.IsZero() {
		first = now
	}
	if o := s.apply(ctx, t, outcome.NotFoundCounted(count)); o != nil {
		return *o
	}
	waited := now.Sub(first)
	verdict, at := outcome.AfterNotFound(p, count, first, now, s.r.graceRule())
	if verdict == outcome.LookAgain {
		return taskResult{Task: t, ServiceOK: true, Next: &task{ref: t.ref, kind: taskLookup, at: at, graceEnd: first.Add(cfg.UnknownGrace)}}
	}
	reason := ""
	switch {
	case verdict == outcome.KeptUnknown:
		reason = "--no-resend-unknown is set"
	case verdict == outcome.StuckForGood:
		s.noteStuck(p)
		if o := s.apply(ctx, t, outcome.StuckNoted(p)); o != nil {
			return *o
		}
		s.log.Warn("payout stuck: "+StuckMessage(t.ref, p.Attempts), "ref", t.ref)
		return taskResult{Task: t, ServiceOK: true, RowDone: true}
	case s.broken.Load():
		reason = "a payout known to exist was reported not found, so \"not found\" proves nothing on this service"
	case !s.proveLookups(ctx):
		reason = "no lookup of a payout known to exist has worked in this run"
	}
	if reason != "" {
		if o := s.apply(ctx, t, outcome.NotResent(count, waited, reason)); o != nil {
			return *o
		}
		return taskResult{Task: t, ServiceOK: true, RowDone: true}
	}
	if o := s.apply(ctx, t, outcome.NeverCreated(count, waited, send)); o != nil {
		return *o
	}
	if !send {
		return taskResult{Task: t, ServiceOK: true, RowDone: true}
	}
	return taskResult{Task: t, ServiceOK: true, Next: &task{ref: t.ref, kind: taskSend, at: now, resend: true}}
}

// lookupSteps are what a caller of lookUpRow does with a lookup's answer: found, with the
// service's payout; missing, when the service says it holds none; gaveUp, when set, after the
// row's lookups got no usable answer within their bound and its note is recorded.
type lookupSteps struct {
	found   func(p ledger.Payout, got api.Payout) taskResult
	missing func(p ledger.Payout, now time.Time) taskResult
	gaveUp  func(limited bool, msg string)
}

// lookUpRow is the one "look up, retry, give up" of the run and reconcile: it reads the row as
// the ledger holds it, looks it up by external_invoice_ref, and hands an answer to steps. A
// refused auth token stops the run; a 429 is tried again after the service's wait, and no usable
// answer after a backoff, each within its bound; past it the row is given up with a note
// (outcome.LookupGivenUp), its state kept.
func (s *lookups) lookUpRow(ctx context.Context, t task, reconcile bool, steps lookupSteps) taskResult {
	cfg := s.r.cfg
	p, err := cfg.Ledger.Get(ctx, t.ref)
	if err != nil {
		return taskResult{Task: t, Fatal: err}
	}
	got, err := lookUp(ctx, cfg.Service, t.ref)
	now := cfg.Now()
	switch outcome.VerdictOf(err) {
	case outcome.Found:
		s.proven.Store(true)
		return steps.found(p, got)
	case outcome.NotFound:
		return steps.missing(p, now)
	case outcome.AuthRefused:
		return taskResult{Task: t, Fatal: outcome.ErrUnauthorized}
	}
	msg := errorText(err)
	limited := api.KindOf(err) == api.KindRateLimited
	o := taskResult{Task: t, Throttled: limited, Failure: !limited}
	if limited {
		wait, retry := s.rateLimited(err, t, now)
		o.Pause = now.Add(wait)
		if retry != nil {
			o.Next = retry
			return o
		}
	} else if t.attempt+1 < cfg.MaxLookupErrors {
		o.Next = &task{ref: t.ref, kind: taskLookup, at: now.Add(backoff(cfg.BackoffBase, cfg.BackoffMax, t.attempt)),
			attempt: t.attempt + 1, refused: t.refused}
		return o
	}
	tries := t.attempt + 1
	if limited {
		tries = t.limited + 1
	}
	if fail := s.apply(ctx, t, outcome.LookupGivenUp(p, reconcile, limited, tries, msg)); fail != nil {
		return *fail
	}
	if steps.gaveUp != nil {
		steps.gaveUp(limited, msg)
	}
	o.RowDone = true
	return o
}

// lookUp is Get Payout by external_invoice_ref. The service reads a reference as an invoice
// number too, so an answer about another payout (another external_invoice_ref, or none with ref
// as its invoice number) says nothing about this one: it is no answer, and is looked up again.
func lookUp(ctx context.Context, svc Service, ref string) (api.Payout, error) {
	got, err := svc.GetPayout(ctx, ref)
	if err != nil {
		return got, err
	}
	other := got.ExternalInvoiceRef != "" && got.ExternalInvoiceRef != ref
	if other || (got.ExternalInvoiceRef == "" && got.PayoutInvoiceNo == ref) {
		return api.Payout{}, &api.Error{Op: "get payout", Kind: api.KindRetryable,
			Err: fmt.Errorf("%w: asked for external_invoice_ref %q, the answer is about invoice %q with external_invoice_ref %q",
				api.ErrBadResponse, ref, got.PayoutInvoiceNo, got.ExternalInvoiceRef)}
	}
	return got, nil
}

// refusalNotFoundTrusted reports whether "not found" may confirm that a refused create created
// nothing. A service may create a payout and still answer "fail", so it is trusted only when no
// payout known to exist was reported not found; when one exists it is looked up first, since a
// confirmed refusal invites paying the row again under a new reference. With no payout known to
// exist there is nothing to check, and the service's refusal and "not found" agree.
func (s *lookups) refusalNotFoundTrusted(ctx context.Context) bool {
	s.proveLookups(ctx)
	return !s.broken.Load()
}

// proveLookups checks, once per run, that a lookup by external_invoice_ref finds a payout known
// to exist. Without that, "not found" could mean the lookup itself is broken.
func (s *lookups) proveLookups(ctx context.Context) bool {
	if s.proven.Load() {
		return true
	}
	s.mu.Lock()
	candidates := append([]string(nil), s.known...)
	s.mu.Unlock()
	if len(candidates) == 0 {
		existing, err := s.r.cfg.Ledger.List(ctx, ledger.Filter{States: []ledger.State{ledger.Submitted, ledger.Succeeded}, Latest: 3})
		if err != nil {
			return false
		}
		for _, p := range existing {
			candidates = append(candidates, p.Ref)
		}
	}
	for _, ref := range candidates {
		if err := s.r.cfg.Limiter.Wait(ctx); err != nil {
			return false
		}
		_, err := lookUp(ctx, s.r.cfg.Service, ref)
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
