package batch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/ledger"
)

// MaxSendAttempts bounds the sends of one row, over all runs, that may have created a payout:
// past it, a row that lookups do not find is never sent again by a run or reconcile (a service
// that keeps losing what it was sent, or a lookup that cannot find what the service holds, is how
// a payout is made twice). It stays UNKNOWN, stuck, until a person checks with the service and
// runs `payout release`.
//
// A send counts (ledger.Payout.Attempts) when its request reached, or may have reached, the
// service: an answer (accepted, refused, duplicate) or no usable one (timeout after the request
// was written, a 5xx, an unreadable answer: the service's interface does not promise that a 5xx
// created nothing). A send whose answer proves it created nothing does not count: a connection
// refused or a request never written (api.KindRetryable), a 429, a refused auth token, a missing
// endpoint. Nor does an intent whose process died before it recorded the answer: the ledger
// cannot tell a death before the POST from one after it, counting both let an operator's kills
// strand rows that were never sent, and such a row is looked up and sent again only on the same
// proof as any other (not found over the whole grace while lookups of existing payouts work).
const MaxSendAttempts = 5

// StuckMessage is what a run, reconcile and `payout status` say of a row at MaxSendAttempts that
// lookups do not find.
func StuckMessage(ref string, attempts int) string {
	return fmt.Sprintf("stuck: sent %d times with no answer; check with the service, then `payout release %s --reason ...`", attempts, ref)
}

// StuckPayout is a row found stuck: its reference and how many times it was sent.
type StuckPayout struct {
	Ref      string `json:"ref"`
	Attempts int    `json:"attempts"`
}

// Stuck reports whether p is a row that no run or reconcile sends again: UNKNOWN, at MaxSendAttempts.
func Stuck(p ledger.Payout) bool {
	return p.State == ledger.Unknown && p.Attempts >= MaxSendAttempts
}

// AuthHint is what to check when the service refuses the auth token.
const AuthHint = "check PAYOUT_AUTH_TOKEN / PAYOUT_AUTH_TOKEN_FILE"

// ErrUnauthorized stops a run: the service refused the auth token.
var ErrUnauthorized = errors.New("the service refused the auth token: " + AuthHint)

// ExplainAuth adds AuthHint to an error that says the service refused the auth token; any other
// error is returned as it is.
func ExplainAuth(err error) error {
	if api.KindOf(err) == api.KindUnauthorized {
		return fmt.Errorf("%w: %s", err, AuthHint)
	}
	return err
}

// submission is one run's sending and looking up, shared by its workers.
type submission struct {
	*lookups
	rowsMu sync.Mutex
	rows   map[string]ledger.Payout // details of the rows handed to the pool and not yet done
}

// newSubmission prepares a run's sending: rows a killed process left SUBMITTING become UNKNOWN,
// to be looked up before anything is sent for them.
func (r *Runner) newSubmission(ctx context.Context, log *slog.Logger, runID string) (*submission, error) {
	if err := RecoverInterrupted(ctx, r.cfg.Ledger, runID); err != nil {
		return nil, err
	}
	s := &submission{lookups: &lookups{r: r, log: log, runID: runID}, rows: make(map[string]ledger.Payout)}
	s.account = func(ref string) (string, bool) {
		p, ok := s.row(ref)
		return p.Account, ok
	}
	return s, nil
}

// take hands payouts, as the ledger holds them, to the submission: READY ones are sent, UNKNOWN
// ones and accepted ones with no invoice number looked up; done counts those that need nothing more.
func (s *submission) take(payouts []ledger.Payout, now time.Time) (tasks []task, done int) {
	s.rowsMu.Lock()
	defer s.rowsMu.Unlock()
	for _, p := range payouts {
		if _, taken := s.rows[p.Ref]; taken {
			continue
		}
		switch {
		case p.State == ledger.Ready:
			tasks = append(tasks, task{ref: p.Ref, kind: taskSend, at: now})
		case p.State == ledger.Unknown:
			// Looked up before anything is sent (see taskQueue).
			tasks = append(tasks, task{ref: p.Ref, kind: taskLookup, at: now, initial: true})
		case p.State == ledger.Submitted && p.InvoiceNo == "":
			tasks = append(tasks, task{ref: p.Ref, kind: taskLookup, at: now})
		default:
			done++
			continue
		}
		s.rows[p.Ref] = p
	}
	return tasks, done
}

// row is the payout a task is about, as handed to the submission.
func (s *submission) row(ref string) (ledger.Payout, bool) {
	s.rowsMu.Lock()
	defer s.rowsMu.Unlock()
	p, ok := s.rows[ref]
	return p, ok
}

// handleAndForget handles a task and, once nothing more will happen to its row in this run,
// forgets the row: a run holds only the rows in the pool.
func (s *submission) handleAndForget(ctx context.Context, t task) outcome {
	o := s.handle(ctx, t)
	if o.rowDone {
		s.rowsMu.Lock()
		delete(s.rows, t.ref)
		s.rowsMu.Unlock()
	}
	return o
}

// pay runs the pool over what feed brings until it is closed, or the run stops; total is the
// number of rows to pay. It returns a non-nil error (wrapping ErrAborted) when it stopped before
// every row was dealt with, and the rows found stuck.
func (s *submission) pay(ctx context.Context, feed <-chan feedBatch, total int) ([]StuckPayout, error) {
	p := &pool{cfg: s.r.cfg, log: s.log, handle: s.handleAndForget}
	err := p.run(ctx, nil, 0, total, feed)
	return s.stuck, err
}

// RecoverInterrupted marks rows left SUBMITTING by a process that died between recording its
// intent and recording the answer: their POST may or may not have reached the service.
func RecoverInterrupted(ctx context.Context, db *ledger.DB, runID string) error {
	stuck, err := db.List(ctx, ledger.Filter{States: []ledger.State{ledger.Submitting}})
	if err != nil {
		return err
	}
	for _, p := range stuck {
		err := db.Apply(ctx, ledger.Change{Ref: p.Ref, From: ledger.Submitting, To: ledger.Unknown, RunID: runID,
			Detail: "found SUBMITTING at start: an earlier process stopped before it recorded the answer; looking it up before anything is sent"})
		if err != nil {
			return err
		}
	}
	return nil
}

// handle sends a READY row or looks one up. It never returns with the ledger behind what was sent.
func (s *submission) handle(ctx context.Context, t task) outcome {
	if t.kind == taskSend {
		return s.settledByCallback(s.send(ctx, t))
	}
	return s.settledByCallback(s.lookup(ctx, t))
}

func (s *submission) send(ctx context.Context, t task) outcome {
	p, ok := s.row(t.ref)
	if !ok {
		// Never a request built from anything but the payout the ledger recorded.
		return outcome{task: t, fatal: fmt.Errorf("send %s: the run does not hold its payout", t.ref)}
	}
	// The intent is durable before the request leaves: a crash after this line leaves SUBMITTING,
	// which the next start looks up instead of sending again.
	if o := s.apply(ctx, t, s.intent(t, p)); o != nil {
		return *o
	}
	created, err := s.post(ctx, p)
	return s.answer(ctx, t, created, err)
}

// intent is the change recorded before a row's POST.
func (s *submission) intent(t task, p ledger.Payout) ledger.Change {
	// The send is counted with its answer, not here (see MaxSendAttempts).
	c := ledger.Change{Ref: t.ref, RunID: s.runID, From: ledger.Ready, To: ledger.Submitting,
		Detail: fmt.Sprintf("sending %s MYR to %s at provider %d", p.Amount.StringFixed(2), MaskAccount(p.Account), p.ProviderID)}
	return c
}

// post sends one row's Create Payout.
func (s *submission) post(ctx context.Context, p ledger.Payout) (api.CreateResult, error) {
	cfg := s.r.cfg
	req := api.CreatePayoutRequest{
		VirtualPoolReference: cfg.VirtualPoolRef,
		PayoutServiceID:      p.ProviderID,
		Amount:               p.Amount,
		ClientRedirectURL:    cfg.RedirectURL,
		ClientCallbackURL:    cfg.CallbackURL,
		ThirdPartyAccountNo:  p.Account,
		RecipientReference:   p.Recipient,
		PaymentDescription:   p.Description,
		ExternalInvoiceRef:   p.Ref,
	}
	return cfg.Service.CreatePayout(ctx, req)
}

// answer records what the service said to a row's POST and says what comes next.
func (s *submission) answer(ctx context.Context, t task, created api.CreateResult, err error) outcome {
	changes, o := afterSend(t, created, err, s.r.cfg.Now(), s.r.backoffs())
	if fail := s.apply(ctx, t, changes...); fail != nil {
		return *fail
	}
	if err == nil {
		s.remember(t.ref)
	}
	return o
}

// acceptedChanges moves a row the service holds to SUBMITTED, and on to its final state when the
// service already gives one.
func acceptedChanges(from ledger.State, invoiceNo, status, how string) []ledger.Change {
	detail := fmt.Sprintf("%s: invoice %s, status %s", how, orNone(invoiceNo), orNone(status))
	changes := []ledger.Change{{From: from, To: ledger.Submitted, InvoiceNo: invoiceNo, TransactionStatus: status,
		ResetNotFound: true, Detail: detail}}
	switch status {
	case api.StatusSuccess:
		changes = append(changes, ledger.Change{From: ledger.Submitted, To: ledger.Succeeded, Detail: "the service reports SUCCESS"})
	case api.StatusFailed:
		changes = append(changes, ledger.Change{From: ledger.Submitted, To: ledger.Failed, Error: "the service reports FAILED",
			Detail: "the service reports FAILED"})
	}
	return changes
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func (s *submission) lookup(ctx context.Context, t task) outcome {
	cfg := s.r.cfg
	db := cfg.Ledger
	p, err := db.Get(ctx, t.ref)
	if err != nil {
		return outcome{task: t, fatal: err}
	}
	got, err := lookUp(ctx, cfg.Service, t.ref)
	now := cfg.Now()
	verdict := verdictOf(err)
	if verdict == lookupFound {
		s.proven.Store(true)
		how := "found by external_invoice_ref"
		if t.refused {
			how = "refused by the service, but found by external_invoice_ref: the service holds it"
		}
		changes := afterFound(p, got, how, differences(p, got))
		if o := s.apply(ctx, t, changes...); o != nil {
			return *o
		}
		return outcome{task: t, serviceOK: true, rowDone: true}
	}
	msg := errorText(err)
	switch verdict {
	case lookupNotFound:
		if p.State != ledger.Unknown {
			// Accepted by the service but not yet visible: the invoice number stays empty until reconcile.
			if o := s.apply(ctx, t, ledger.Change{From: p.State, To: p.State,
				Detail: "lookup after an accepted create found nothing yet; reconcile fills the invoice number"}); o != nil {
				return *o
			}
			return outcome{task: t, serviceOK: true, rowDone: true}
		}
		if t.refused {
			return s.confirmRefusal(ctx, t, p)
		}
		return s.notFound(ctx, t, p, now, true)
	case lookupStop:
		return outcome{task: t, fatal: ErrUnauthorized}
	case lookupThrottled:
		wait, retry := s.rateLimited(err, t, now)
		if retry == nil {
			if o := s.apply(ctx, t, ledger.Change{From: p.State, To: p.State, Error: msg,
				Detail: fmt.Sprintf("lookup rate limited %d times in a row: left for `payout reconcile`", t.limited+1)}); o != nil {
				return *o
			}
			return outcome{task: t, throttled: true, pause: now.Add(wait), rowDone: true}
		}
		return outcome{task: t, throttled: true, pause: now.Add(wait), next: retry}
	default:
		if t.attempt+1 >= cfg.MaxLookupErrors {
			if o := s.apply(ctx, t, ledger.Change{From: p.State, To: p.State, Error: msg,
				Detail: fmt.Sprintf("lookup failed %d times: left for `payout reconcile`: %s", t.attempt+1, msg)}); o != nil {
				return *o
			}
			return outcome{task: t, failure: true, rowDone: true}
		}
		return outcome{task: t, failure: true, next: &task{ref: t.ref, kind: taskLookup,
			at: now.Add(backoff(cfg.BackoffBase, cfg.BackoffMax, t.attempt)), attempt: t.attempt + 1, refused: t.refused}}
	}
}

// RefusalConfirmed ends the error of a FAILED row whose refusal a lookup by external_invoice_ref
// confirmed: only such a row is known never to have been created, and may be paid again under a
// new reference.
const RefusalConfirmed = "refusal confirmed: a lookup by external_invoice_ref found no payout"

// confirmRefusal makes a refused row final FAILED: the lookup found no payout with its reference.
func (s *submission) confirmRefusal(ctx context.Context, t task, p ledger.Payout) outcome {
	if !s.refusalNotFoundTrusted(ctx) {
		if o := s.apply(ctx, t, ledger.Change{From: p.State, To: p.State,
			Detail: "refused by the service and not found by external_invoice_ref, but a payout known to exist was reported not found in this run: \"not found\" proves nothing; needs reconciliation"}); o != nil {
			return *o
		}
		return outcome{task: t, serviceOK: true, rowDone: true}
	}
	if o := s.apply(ctx, t, ledger.Change{From: p.State, To: ledger.Failed, Error: confirmedError(p.LastError), ConfirmRefusal: true,
		Detail: "refused by the service, and a lookup by external_invoice_ref found no payout: nothing was created; final FAILED"}); o != nil {
		return *o
	}
	return outcome{task: t, serviceOK: true, rowDone: true}
}

func confirmedError(refusal string) string {
	if refusal == "" {
		return RefusalConfirmed
	}
	return refusal + "; " + RefusalConfirmed
}

// FailureConfirmed reports whether a FAILED row is known never to pay: the service holds it as
// FAILED (it has an invoice number), or a lookup confirmed that the service created nothing.
func FailureConfirmed(p ledger.Payout) bool {
	return p.InvoiceNo != "" || p.RefusalConfirmed
}

// errorText is an error as an auditor reads it. api errors never carry the token.
func errorText(err error) string {
	return err.Error()
}
