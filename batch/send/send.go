// Package send sends a run's payouts exactly once each: a payout's intent is durable, and its
// claim proved, before its request leaves; an answer that never came is looked up before
// anything is sent again; and every send is first proved against the approvals the ledger stores.
package send

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/journal"
	"github.com/payout/payout/batch/lookup"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/pool"
	"github.com/payout/payout/ledger"
)

// Ledger is what sending reads and records: the payouts and their moves (the orphans a process
// that is gone left among them), and the evidence of the run's approval.
type Ledger interface {
	lookup.Ledger
	approval.EvidenceLedger
}

// Service is what sending asks of the payout service.
type Service interface {
	lookup.Service
	CreatePayout(ctx context.Context, req api.CreatePayoutRequest) (api.CreateResult, error)
}

// Config is how a run sends. The runner's configuration says what each field means.
type Config struct {
	Ledger  Ledger
	Service Service
	// Pool paces and schedules the sends and lookups; Lookups looks payouts up (its Account is
	// the submission's).
	Pool    pool.Config
	Lookups lookup.Config
	// Request holds what every create carries besides its payout: the virtual pool, the
	// redirect and callback URLs.
	Request  api.CreatePayoutRequest
	Process  string
	Liveness ledger.Liveness
	Fence    ledger.Fence
	// InFlightHold, when set, is said in the note of a recovered orphan.
	InFlightHold   time.Duration
	Journal        func(journal.Entry) error
	AllowedSigners string
	// AfterIntent and BeforePost are where the tests pause a process.
	AfterIntent, BeforePost func(ref string)
	// State is shared by the runs of one process (NewState).
	State *State
}

// Feed is a chunk's work for the pool: its tasks, how many of its rows need nothing more, or
// the error that stopped the feed.
type Feed = pool.Feed[lookup.Task]

// Submission is one run's sending and looking up, shared by its workers.
type Submission struct {
	cfg    Config
	log    *slog.Logger
	runID  string
	look   *lookup.Session
	rowsMu sync.Mutex
	rows   map[string]ledger.Payout // details of the rows handed to the pool and not yet done
}

// Start prepares run runID's sending: rows a process that is gone left SUBMITTING become
// UNKNOWN, to be looked up before anything is sent for them. The run counts as sending (its
// claims are its own) until done is called.
func Start(ctx context.Context, cfg Config, log *slog.Logger, runID string) (s *Submission, done func(), err error) {
	if done, err = start(ctx, cfg, runID); err != nil {
		return nil, nil, err
	}
	s = &Submission{cfg: cfg, log: log, runID: runID, rows: make(map[string]ledger.Payout)}
	lc := cfg.Lookups
	lc.Logger, lc.RunID = log, runID
	lc.Account = func(ref string) (string, bool) {
		p, ok := s.row(ref)
		return p.Account, ok
	}
	s.look = lookup.New(lc)
	return s, done, nil
}

// Take hands payouts, as the ledger holds them, to the submission: READY ones are sent, UNKNOWN
// ones and accepted ones with no invoice number looked up; done counts those that need nothing more.
func (s *Submission) Take(payouts []ledger.Payout, now time.Time) (tasks []lookup.Task, done int) {
	s.rowsMu.Lock()
	defer s.rowsMu.Unlock()
	for _, p := range payouts {
		if _, taken := s.rows[p.Ref]; taken {
			continue
		}
		if !outcome.Unfinished(p) {
			done++
			continue
		}
		switch p.State {
		case ledger.Ready:
			tasks = append(tasks, lookup.Task{Ref: p.Ref, Kind: lookup.Send, At: now})
		case ledger.Unknown:
			// Looked up before anything is sent (a pool.Task that goes First).
			tasks = append(tasks, lookup.Task{Ref: p.Ref, Kind: lookup.LookUp, At: now, Initial: true})
		default: // accepted, with no invoice number to know it by
			tasks = append(tasks, lookup.Task{Ref: p.Ref, Kind: lookup.LookUp, At: now})
		}
		s.rows[p.Ref] = p
	}
	return tasks, done
}

// row is the payout a task is about, as handed to the submission.
func (s *Submission) row(ref string) (ledger.Payout, bool) {
	s.rowsMu.Lock()
	defer s.rowsMu.Unlock()
	p, ok := s.rows[ref]
	return p, ok
}

// handleAndForget handles a task and, once nothing more will happen to its row in this run,
// forgets the row: a run holds only the rows in the pool.
func (s *Submission) handleAndForget(ctx context.Context, t lookup.Task) lookup.Result {
	o := s.handle(ctx, t)
	if o.RowDone {
		s.rowsMu.Lock()
		delete(s.rows, t.Ref)
		s.rowsMu.Unlock()
	}
	return o
}

// Pay runs the pool over what feed brings until it is closed, or the run stops; total is the
// number of rows to pay. It returns a non-nil error (wrapping pool.ErrAborted) when it stopped
// before every row was dealt with, and the rows found stuck.
func (s *Submission) Pay(ctx context.Context, feed <-chan Feed, total int) ([]lookup.Stuck, error) {
	pc := s.cfg.Pool
	pc.Logger = s.log
	err := pool.New(pc, s.handleAndForget).Run(ctx, nil, 0, total, feed)
	return s.look.Stuck(), err
}

// handle sends a READY row or looks one up. It never returns with the ledger behind what was sent.
func (s *Submission) handle(ctx context.Context, t lookup.Task) lookup.Result {
	if t.Kind == lookup.Send {
		return s.look.SettledByCallback(s.send(ctx, t))
	}
	return s.look.SettledByCallback(s.lookup(ctx, t))
}

func (s *Submission) send(ctx context.Context, t lookup.Task) lookup.Result {
	p, ok := s.row(t.Ref)
	if !ok {
		// Never a request built from anything but the payout the ledger recorded.
		return lookup.Result{Task: t, Fatal: fmt.Errorf("send %s: the run does not hold its payout", t.Ref)}
	}
	if o := s.prove(ctx, t, p); o != nil {
		return *o
	}
	// The intent is durable before the request leaves: a crash after this line leaves SUBMITTING,
	// which the next start looks up instead of sending again.
	if o := s.look.Apply(ctx, t, outcome.Intent(p, s.runID, s.cfg.Process)); o != nil {
		return *o
	}
	if s.cfg.AfterIntent != nil {
		s.cfg.AfterIntent(t.Ref)
	}
	if o := s.clearToSend(ctx, t); o != nil {
		return *o
	}
	if s.cfg.BeforePost != nil {
		s.cfg.BeforePost(t.Ref)
	}
	created, err := s.post(ctx, p)
	return s.answer(ctx, t, created, err)
}

// clearToSend proves, after the intent and right before the POST, that this process still holds
// its claim (Config.Fence), and takes the limiter's turn (pool.TakeTurn): a turn taken before
// the intent's commit would be spent whenever the commit ended, bunched with others. It returns
// nil when the POST may go. Otherwise nothing was sent: a claim that cannot be proved stays
// SUBMITTING, for whoever takes it over to look up (the process stops: its hold is gone); a turn
// that could not be had makes the row READY again.
func (s *Submission) clearToSend(ctx context.Context, t lookup.Task) *lookup.Result {
	cfg := s.cfg
	var proof pool.Proof
	if cfg.Fence != nil {
		proof = cfg.Fence
		if err := cfg.Fence.Confirm(ctx); err != nil {
			return s.claimUnproved(t, err)
		}
	}
	err := pool.TakeTurn(ctx, cfg.Pool.Limiter, cfg.Pool.Clock, proof)
	switch {
	case err == nil:
		s.log.Debug("claim proved and turn taken: sending", "ref", t.Ref)
		return nil
	case errors.Is(err, ledger.ErrClaimLost):
		return s.claimUnproved(t, err)
	}
	stopped := pool.Stopping(ctx).Err() != nil
	why := err.Error()
	if stopped {
		why = "the run was stopped before its turn of the rate limit"
	}
	if o := s.look.Apply(ctx, t, outcome.NotSent(t.Ref, s.runID, why)); o != nil {
		return o
	}
	if stopped {
		return &lookup.Result{Task: t} // READY again; the pool is stopping
	}
	return &lookup.Result{Task: t, Fatal: fmt.Errorf("payout %s not sent: %w", t.Ref, err)}
}

// claimUnproved is the end of a send whose claim could not be proved: nothing was sent.
func (s *Submission) claimUnproved(t lookup.Task, err error) *lookup.Result {
	s.log.Error("payout not sent: this process cannot prove it still holds its claim; stopping", "ref", t.Ref, "err", err)
	return &lookup.Result{Task: t, Fatal: fmt.Errorf("payout %s not sent, left SUBMITTING for whoever takes it over to look up: %w", t.Ref, err)}
}

// post sends one row's Create Payout.
func (s *Submission) post(ctx context.Context, p ledger.Payout) (api.CreateResult, error) {
	req := s.cfg.Request
	req.PayoutServiceID, req.Amount, req.ThirdPartyAccountNo = p.ProviderID, p.Amount, p.Account
	req.RecipientReference, req.PaymentDescription, req.ExternalInvoiceRef = p.Recipient, p.Description, p.Ref
	return s.cfg.Service.CreatePayout(ctx, req)
}

// answer records what the service said to a row's POST and says what comes next.
func (s *Submission) answer(ctx context.Context, t lookup.Task, created api.CreateResult, err error) lookup.Result {
	changes, o := afterSend(t, created, err, s.cfg.Lookups.Now(), s.cfg.Lookups.Backoff)
	if fail := s.look.Apply(ctx, t, changes...); fail != nil {
		return s.answerNotRecorded(ctx, t, created, err, fail.Fatal)
	}
	if err == nil {
		s.look.Remember(t.Ref)
	}
	return o
}

// lookup looks a row up (lookup.Session.Row): found, the ledger follows the service; not found,
// an accepted row waits for reconcile, a refused one is confirmed, an UNKNOWN one waits out its
// grace and is sent again once proven never created.
func (s *Submission) lookup(ctx context.Context, t lookup.Task) lookup.Result {
	return s.look.Row(ctx, t, false, lookup.Steps{
		Found: func(p ledger.Payout, got api.Payout) lookup.Result {
			how := "found by external_invoice_ref"
			if t.Refused {
				how = "refused by the service, but found by external_invoice_ref: the service holds it"
			}
			if o := s.look.Apply(ctx, t, outcome.AfterFound(p, got, how, outcome.Differences(p, got))...); o != nil {
				return *o
			}
			return lookup.Result{Task: t, ServiceOK: true, RowDone: true}
		},
		Missing: func(p ledger.Payout, now time.Time) lookup.Result {
			switch {
			case p.State != ledger.Unknown:
				if o := s.look.Apply(ctx, t, outcome.NotYetVisible(p)); o != nil {
					return *o
				}
				return lookup.Result{Task: t, ServiceOK: true, RowDone: true}
			case t.Refused:
				return s.confirmRefusal(ctx, t, p)
			}
			return s.look.NotFound(ctx, t, p, now, true)
		},
	})
}

// confirmRefusal records what a lookup that did not find a refused row decides
// (outcome.ConfirmRefusal): final FAILED, unless "not found" is not trusted in this run.
func (s *Submission) confirmRefusal(ctx context.Context, t lookup.Task, p ledger.Payout) lookup.Result {
	if o := s.look.Apply(ctx, t, outcome.ConfirmRefusal(p, s.look.RefusalNotFoundTrusted(ctx))); o != nil {
		return *o
	}
	return lookup.Result{Task: t, ServiceOK: true, RowDone: true}
}

// answerNotRecorded ends a POST whose answer the ledger did not take (recordErr). When the
// payout is no longer SUBMITTING, another process took it over while this one was paused
// between the proof of its claim and its request, and the service may hold the reference twice
// (under the invoice number answered here and the one the ledger holds); when the ledger did not
// answer, whoever takes the payout over looks it up first, but may already have sent it again.
// Either way it is never silent: said at ERROR, kept in the journal of late sends
// (Config.Journal), which reconcile reads, noted on the payout where the ledger takes a note,
// and the run stops.
func (s *Submission) answerNotRecorded(ctx context.Context, t lookup.Task, created api.CreateResult, sendErr, recordErr error) lookup.Result {
	cfg := s.cfg
	e := journal.Entry{At: cfg.Lookups.Now(), Ref: t.Ref, SentBy: cfg.Process, InvoiceNo: created.InvoiceNo, Status: created.TransactionStatus}
	if sendErr != nil {
		e.Answer = sendErr.Error()
	}
	p, gerr := cfg.Ledger.Get(ctx, t.Ref)
	if gerr == nil {
		e.LedgerState, e.LedgerInvoiceNo = string(p.State), p.InvoiceNo
	}
	takenOver := errors.Is(recordErr, ledger.ErrStateConflict)
	if takenOver && e.InvoiceNo != "" && e.InvoiceNo == e.LedgerInvoiceNo {
		// The ledger already holds this very payout (a callback or a lookup recorded it first).
		s.log.Info("payout recorded by another hand while its answer came: the same invoice", "ref", t.Ref, "invoice", e.InvoiceNo)
		return lookup.Result{Task: t, ServiceOK: true, RowDone: true}
	}
	msg := outcome.AnswerNotRecorded(e.InvoiceNo, e.LedgerInvoiceNo, e.Answer, takenOver)
	s.log.Error("payout answer not recorded: "+msg, "ref", t.Ref, "ledger_state", e.LedgerState, "err", recordErr)
	if cfg.Journal != nil {
		if err := cfg.Journal(e); err != nil {
			s.log.Error("the answer could not be kept in the journal of late sends either: note it by hand", "ref", t.Ref,
				"invoice", e.InvoiceNo, "err", err)
		}
	}
	if takenOver && gerr == nil && ledger.Allowed(p.State, p.State) {
		if err := cfg.Ledger.Apply(ctx, outcome.Note(p, s.runID, msg)); err != nil {
			s.log.Error("the late send could not be noted on the payout", "ref", t.Ref, "err", err)
		}
	}
	return lookup.Result{Task: t, Fatal: fmt.Errorf("payout %s: %s: %w", t.Ref, msg, recordErr)}
}
