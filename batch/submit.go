package batch

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/ledger"
)

// Bounds that keep one row from looping within a run; the row is then left for a rerun or for
// `payout reconcile`, in the state the ledger records.
const (
	maxRateLimited = 30 // 429s in a row for one task
	// maxThrottled 429s in a row, whatever the payouts, stop a reconciliation (see
	// submission.throttleBreaker): the service keeps throttling although its Retry-After is
	// honoured, and the next reconcile, later, loses nothing.
	maxThrottled = maxRateLimited
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

// errThrottled stops a dispatch whose service answers nothing but 429.
var errThrottled = errors.New("the service is throttling (HTTP 429)")

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

type taskKind int

const (
	taskSend   taskKind = iota // POST the payout: the row is READY
	taskLookup                 // GET it by external_invoice_ref: the row is UNKNOWN, or SUBMITTED without an invoice number
)

type task struct {
	ref     string
	kind    taskKind
	at      time.Time
	attempt int  // earlier tries of this kind that ended in an error
	limited int  // 429s in a row for this task
	resend  bool // a send after "not found" proved the earlier one created nothing
	initial bool // a lookup that must finish before anything new is sent
	// refused is a lookup that confirms the service's refusal of the row's create: "not found"
	// makes the row final FAILED, where an UNKNOWN row would wait out the grace.
	refused bool
	// graceEnd, on a lookup of a row reported not found, is when its grace is over: until then
	// it is only looked up.
	graceEnd time.Time
}

// outcome is what a worker reports back to the dispatcher after one task.
type outcome struct {
	task      task
	next      *task     // a follow-up for the same row, if any
	serviceOK bool      // the service answered something
	failure   bool      // the service did not answer: counts towards the circuit breaker
	throttled bool      // the service answered 429
	pause     time.Time // 429: nothing is sent or looked up before this
	fatal     error     // stop the run
	rowDone   bool      // nothing more will happen to this row in this run
}

// submission is the state of one run's dispatching, shared by its workers.
type submission struct {
	r      *Runner
	log    *slog.Logger
	runID  string
	rows   map[string]ledger.Payout // details of the rows to pay; read-only once started
	proven atomic.Bool              // a lookup by external_invoice_ref found a payout in this run
	broken atomic.Bool              // a payout known to exist was reported not found: lookups prove nothing
	mu     sync.Mutex
	known  []string      // refs accepted by the service in this run, for proving lookups work
	stuck  []StuckPayout // rows found stuck (see Stuck) in this run

	// check, when set, handles every task instead of send and lookup: reconcile's lookups, which
	// never POST. lookupOnly leaves a row proven never created READY instead of sending it.
	check      func(context.Context, task) outcome
	lookupOnly bool
	// throttleBreaker, when above zero, stops dispatching after that many 429s in a row with
	// no other answer between them (errThrottled).
	throttleBreaker int
}

// submit pays refs: it recovers rows a killed process left behind, looks up every row whose outcome
// is unknown, then sends the READY ones through the worker pool. Every ref is in the ledger
// already: Record stored the file's new payouts READY with its lines. It returns a non-nil error
// (wrapping ErrAborted) when it stopped before every row was dealt with, and the rows found stuck.
func (r *Runner) submit(ctx context.Context, log *slog.Logger, runID string, refs []string) ([]StuckPayout, error) {
	db := r.cfg.Ledger
	bg := context.WithoutCancel(ctx)
	if err := recoverInterrupted(bg, db, runID); err != nil {
		return nil, err
	}
	current, err := db.Lookup(bg, refs)
	if err != nil {
		return nil, err
	}
	s := &submission{r: r, log: log, runID: runID, rows: current}
	tasks := make([]task, 0, len(refs))
	done := 0
	now := r.cfg.Now()
	seen := make(map[string]bool, len(refs))
	for _, ref := range refs {
		if seen[ref] {
			continue
		}
		seen[ref] = true
		p, ok := current[ref]
		if !ok {
			return nil, fmt.Errorf("ledger lost payout %q", ref)
		}
		switch {
		case p.State == ledger.Ready:
			tasks = append(tasks, task{ref: ref, kind: taskSend, at: now})
		case p.State == ledger.Unknown:
			// Due before every send, so that the dispatcher, which waits for these, reaches them first.
			tasks = append(tasks, task{ref: ref, kind: taskLookup, at: now.Add(-time.Second), initial: true})
		case p.State == ledger.Submitted && p.InvoiceNo == "":
			tasks = append(tasks, task{ref: ref, kind: taskLookup, at: now})
		default:
			done++
		}
	}
	total := len(seen)
	if r.cfg.Progress != nil {
		r.cfg.Progress(done, total)
	}
	err = s.dispatch(ctx, tasks, done, total)
	return s.stuck, err
}

// recoverInterrupted marks rows left SUBMITTING by a process that died between recording its
// intent and recording the answer: their POST may or may not have reached the service.
func recoverInterrupted(ctx context.Context, db *ledger.DB, runID string) error {
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

// dispatch hands due tasks to the workers until none is left, the context ends, or the run must
// stop. A worker takes one task at a time and reports its outcome only once everything the task
// sent is recorded.
func (s *submission) dispatch(ctx context.Context, tasks []task, done, total int) error {
	cfg := s.r.cfg
	queue := &taskQueue{}
	initial := 0
	for _, t := range tasks {
		heap.Push(queue, t)
		if t.initial {
			initial++
		}
	}
	work := make(chan task)
	results := make(chan outcome)
	var wg sync.WaitGroup
	for i := 0; i < cfg.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range work {
				results <- s.handle(ctx, t)
			}
		}()
	}
	defer func() {
		close(work)
		wg.Wait()
	}()

	var (
		inflight   int
		failures   int
		throttled  int
		pauseUntil time.Time
		stopReason error
		stopping   bool
		ctxDone    = ctx.Done()
		timer      = time.NewTimer(time.Hour)
	)
	defer timer.Stop()
	// graceSaid is the end of the grace last announced while nothing else was going on;
	// waitShown, that Config.Waiting was told and not yet told the wait is over.
	var (
		graceSaid time.Time
		waitShown bool
	)
	stop := func(reason error) {
		if stopReason == nil {
			stopReason = reason
		}
		stopping = true
	}
	for {
		if stopping {
			// Rows not yet handed out stay as the ledger has them (READY or UNKNOWN): a rerun resumes them.
			*queue = (*queue)[:0]
		}
		if queue.Len() == 0 && inflight == 0 {
			break
		}
		var (
			out  chan task
			next task
			wake <-chan time.Time
		)
		now := cfg.Now()
		if queue.Len() > 0 {
			head := (*queue)[0]
			at := head.at
			// A 429's Retry-After holds every request back, lookups too: the service said so.
			if pauseUntil.After(at) {
				at = pauseUntil
			}
			// Unknown outcomes are looked up once before anything new goes out.
			held := head.kind == taskSend && initial > 0
			switch {
			case !held && !at.After(now):
				out, next = work, head
			case !held:
				timer.Reset(at.Sub(now))
				wake = timer.C
			}
		}
		if wake != nil && inflight == 0 && (*queue)[0].kind == taskLookup && !(*queue)[0].graceEnd.IsZero() {
			if said := s.announceGrace(*queue, now, graceSaid); said != graceSaid {
				graceSaid, waitShown = said, cfg.Waiting != nil
			}
		}
		select {
		case out <- next:
			heap.Pop(queue)
			inflight++
			if waitShown {
				cfg.Waiting(0, time.Time{})
				waitShown = false
			}
		case o := <-results:
			inflight--
			if o.task.initial {
				initial--
			}
			switch {
			case o.serviceOK:
				failures, throttled = 0, 0
			case o.failure:
				failures++
			case o.throttled:
				throttled++
			}
			if o.pause.After(pauseUntil) {
				pauseUntil = o.pause
			}
			if o.next != nil {
				heap.Push(queue, *o.next)
			}
			if o.rowDone {
				done++
				if cfg.Progress != nil {
					cfg.Progress(done, total)
				}
			}
			switch {
			case o.fatal != nil:
				stop(o.fatal)
			case failures >= cfg.BreakerThreshold:
				stop(fmt.Errorf("the service failed %d times in a row: stopped sending", failures))
			case s.throttleBreaker > 0 && throttled >= s.throttleBreaker:
				stop(fmt.Errorf("%w: %d answers in a row were 429", errThrottled, throttled))
			}
		case <-wake:
		case <-ctxDone:
			ctxDone = nil
			stop(context.Cause(ctx)) // the signal that stopped the command, if one did
		}
	}
	if stopReason != nil {
		s.log.Warn("run stopped; rerun to resume", "reason", stopReason.Error())
		return fmt.Errorf("%w: %w", ErrAborted, stopReason)
	}
	return nil
}

// announceGrace says, once per grace end, what an idle run waits for: rows reported not found
// are looked up again, spaced out, until their grace is over, and only then may be sent again.
// A run that stood still at its last rows without a word looked hung.
func (s *submission) announceGrace(queue taskQueue, now, said time.Time) time.Time {
	n := 0
	var until time.Time
	for _, t := range queue {
		if !t.graceEnd.IsZero() {
			n++
			if t.graceEnd.After(until) {
				until = t.graceEnd
			}
		}
	}
	if !until.After(said) {
		return said
	}
	wait := until.Sub(now).Round(time.Second)
	s.log.Warn(fmt.Sprintf("waiting for the unknown-outcome grace: %d payouts whose outcome is unknown were not found by external_invoice_ref; they are looked up again until %s (%s from now) before any is sent again",
		n, until.Format(time.TimeOnly), wait), "payouts", n, "until", until, "wait", wait.String())
	if s.r.cfg.Waiting != nil {
		s.r.cfg.Waiting(n, until)
	}
	return until
}

// settledByCallback turns a state conflict into "done": only a callback moves rows beside a run
// (the run holds the ledger's lock), and only towards SUCCEEDED, so the row has its answer.
func settledByCallback(s *submission, o outcome) outcome {
	if o.fatal != nil && errors.Is(o.fatal, ledger.ErrStateConflict) {
		s.log.Info("payout moved by a callback while this task handled it", "ref", o.task.ref, "err", o.fatal.Error())
		return outcome{task: o.task, serviceOK: o.serviceOK, rowDone: true}
	}
	return o
}

// handle runs one task. It never returns with the ledger behind what was sent.
func (s *submission) handle(ctx context.Context, t task) outcome {
	// Once a request may have been sent, its answer is recorded even if the run is being stopped.
	bg := context.WithoutCancel(ctx)
	if err := s.r.cfg.Limiter.Wait(ctx); err != nil {
		return outcome{task: t}
	}
	if ctx.Err() != nil {
		return outcome{task: t}
	}
	var o outcome
	switch {
	case s.check != nil:
		o = s.check(bg, t)
	case t.kind == taskSend:
		o = s.send(bg, t)
	default:
		o = s.lookup(bg, t)
	}
	return settledByCallback(s, o)
}

func (s *submission) apply(ctx context.Context, t task, changes ...ledger.Change) *outcome {
	for i := range changes {
		changes[i].Ref, changes[i].RunID = t.ref, s.runID
	}
	if err := s.r.cfg.Ledger.Apply(ctx, changes...); err != nil {
		return &outcome{task: t, fatal: fmt.Errorf("record %s: %w", t.ref, err)}
	}
	return nil
}

func (s *submission) send(ctx context.Context, t task) outcome {
	// The intent is durable before the request leaves: a crash after this line leaves SUBMITTING,
	// which the next start looks up instead of sending again.
	if o := s.apply(ctx, t, s.intent(t)); o != nil {
		return *o
	}
	created, err := s.post(ctx, t)
	return s.answer(ctx, t, created, err)
}

// intent is the change recorded before a row's POST.
func (s *submission) intent(t task) ledger.Change {
	p := s.rows[t.ref]
	// The send is counted with its answer, not here (see MaxSendAttempts).
	c := ledger.Change{Ref: t.ref, RunID: s.runID, From: ledger.Ready, To: ledger.Submitting,
		Detail: fmt.Sprintf("sending %s MYR to %s at provider %d", p.Amount.StringFixed(2), MaskAccount(p.Account), p.ProviderID)}
	return c
}

// post sends one row's Create Payout.
func (s *submission) post(ctx context.Context, t task) (api.CreateResult, error) {
	cfg := s.r.cfg
	p := s.rows[t.ref]
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

// rateLimited is rateLimitedRetry with the run's backoffs.
func (s *submission) rateLimited(err error, t task, now time.Time) (time.Duration, *task) {
	return rateLimitedRetry(err, t, now, s.r.backoffs())
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

func (s *submission) remember(ref string) {
	s.mu.Lock()
	if len(s.known) < 16 {
		s.known = append(s.known, ref)
	}
	s.mu.Unlock()
}

func (s *submission) noteStuck(p ledger.Payout) {
	s.mu.Lock()
	s.stuck = append(s.stuck, StuckPayout{Ref: p.Ref, Attempts: p.Attempts})
	s.mu.Unlock()
}

func (s *submission) lookup(ctx context.Context, t task) outcome {
	cfg := s.r.cfg
	db := cfg.Ledger
	p, err := db.Get(ctx, t.ref)
	if err != nil {
		return outcome{task: t, fatal: err}
	}
	got, err := cfg.Service.GetPayout(ctx, t.ref)
	now := cfg.Now()
	verdict := verdictOf(err)
	if verdict == lookupFound {
		s.proven.Store(true)
		how := "found by external_invoice_ref"
		if t.refused {
			how = "refused by the service, but found by external_invoice_ref: the service holds it"
		}
		if mismatch := differenceText(differences(p, got)); mismatch != "" {
			how += " (" + mismatch + ")"
		}
		var changes []ledger.Change
		if p.State == ledger.Submitted {
			changes = []ledger.Change{{From: ledger.Submitted, To: ledger.Submitted, InvoiceNo: got.PayoutInvoiceNo,
				TransactionStatus: got.TransactionStatus, Detail: fmt.Sprintf("%s: invoice %s, status %s", how,
					orNone(got.PayoutInvoiceNo), orNone(got.TransactionStatus))}}
			if got.Final() {
				changes = acceptedChanges(ledger.Submitted, got.PayoutInvoiceNo, got.TransactionStatus, how)
			}
		} else {
			changes = acceptedChanges(p.State, got.PayoutInvoiceNo, got.TransactionStatus, how)
		}
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
		return s.notFound(ctx, t, p, now)
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
	if s.broken.Load() {
		if o := s.apply(ctx, t, ledger.Change{From: p.State, To: p.State,
			Detail: "refused by the service and not found by external_invoice_ref, but a payout known to exist was reported not found in this run: \"not found\" proves nothing; needs reconciliation"}); o != nil {
			return *o
		}
		return outcome{task: t, serviceOK: true, rowDone: true}
	}
	if o := s.apply(ctx, t, ledger.Change{From: p.State, To: ledger.Failed, Error: confirmedError(p.LastError),
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
func FailureConfirmed(invoiceNo, lastError string) bool {
	return invoiceNo != "" || strings.Contains(lastError, RefusalConfirmed)
}

// notFound records a "not found" for an UNKNOWN row and decides: look again later, send again, or
// leave it for reconciliation. A single "not found" proves little: the create may still be queued.
func (s *submission) notFound(ctx context.Context, t task, p ledger.Payout, now time.Time) outcome {
	cfg := s.r.cfg
	count := p.NotFoundCount + 1
	first := p.FirstNotFoundAt
	if first.IsZero() {
		first = now
	}
	if o := s.apply(ctx, t, ledger.Change{From: ledger.Unknown, To: ledger.Unknown, CountNotFound: true,
		Detail: fmt.Sprintf("lookup %d by external_invoice_ref: not found", count)}); o != nil {
		return *o
	}
	waited := now.Sub(first)
	verdict, at := afterNotFound(p, count, first, now, s.r.graceRule())
	if verdict == lookAgain {
		return outcome{task: t, serviceOK: true, next: &task{ref: t.ref, kind: taskLookup, at: at, graceEnd: first.Add(cfg.UnknownGrace)}}
	}
	reason := ""
	switch {
	case verdict == keptUnknown:
		reason = "--no-resend-unknown is set"
	case verdict == stuckForGood:
		s.noteStuck(p)
		if o := s.apply(ctx, t, ledger.Change{From: ledger.Unknown, To: ledger.Unknown, Error: StuckMessage(t.ref, p.Attempts),
			Detail: fmt.Sprintf("not found by external_invoice_ref, but not sent again: %s", StuckMessage(t.ref, p.Attempts))}); o != nil {
			return *o
		}
		s.log.Warn("payout stuck: "+StuckMessage(t.ref, p.Attempts), "ref", t.ref)
		return outcome{task: t, serviceOK: true, rowDone: true}
	case s.broken.Load():
		reason = "a payout known to exist was reported not found, so \"not found\" proves nothing on this service"
	case !s.proveLookups(ctx):
		reason = "no lookup of a payout known to exist has worked in this run"
	}
	if reason != "" {
		if o := s.apply(ctx, t, ledger.Change{From: ledger.Unknown, To: ledger.Unknown,
			Detail: fmt.Sprintf("not found by %d lookups over %s, but not sent again: %s; needs reconciliation", count,
				waited.Round(time.Millisecond), reason)}); o != nil {
			return *o
		}
		return outcome{task: t, serviceOK: true, rowDone: true}
	}
	if s.lookupOnly {
		if o := s.apply(ctx, t, ledger.Change{From: ledger.Unknown, To: ledger.Ready, ResetNotFound: true,
			Detail: fmt.Sprintf("not found by %d lookups over %s while lookups of existing payouts work: the earlier request created nothing; not sent by reconcile: the next run of its file sends it",
				count, waited.Round(time.Millisecond))}); o != nil {
			return *o
		}
		return outcome{task: t, serviceOK: true, rowDone: true}
	}
	if o := s.apply(ctx, t, ledger.Change{From: ledger.Unknown, To: ledger.Ready, ResetNotFound: true,
		Detail: fmt.Sprintf("not found by %d lookups over %s while lookups of existing payouts work: the earlier request created nothing; sending again",
			count, waited.Round(time.Millisecond))}); o != nil {
		return *o
	}
	return outcome{task: t, serviceOK: true, next: &task{ref: t.ref, kind: taskSend, at: now, resend: true}}
}

// proveLookups checks, once per run, that a lookup by external_invoice_ref finds a payout known
// to exist. Without that, "not found" could mean the lookup itself is broken.
func (s *submission) proveLookups(ctx context.Context) bool {
	if s.proven.Load() {
		return true
	}
	s.mu.Lock()
	candidates := append([]string(nil), s.known...)
	s.mu.Unlock()
	if len(candidates) == 0 {
		existing, err := s.r.cfg.Ledger.List(ctx, ledger.Filter{States: []ledger.State{ledger.Submitted, ledger.Succeeded}})
		if err != nil {
			return false
		}
		for i := len(existing) - 1; i >= 0 && len(candidates) < 3; i-- {
			candidates = append(candidates, existing[i].Ref)
		}
	}
	for _, ref := range candidates {
		if err := s.r.cfg.Limiter.Wait(ctx); err != nil {
			return false
		}
		_, err := s.r.cfg.Service.GetPayout(ctx, ref)
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

// errorText is an error as an auditor reads it. api errors never carry the token.
func errorText(err error) string {
	return err.Error()
}

// taskQueue is a min-heap of tasks by due time.
type taskQueue []task

func (q taskQueue) Len() int           { return len(q) }
func (q taskQueue) Less(i, j int) bool { return q[i].at.Before(q[j].at) }
func (q taskQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *taskQueue) Push(x any)        { *q = append(*q, x.(task)) }
func (q *taskQueue) Pop() any {
	old := *q
	t := old[len(old)-1]
	*q = old[:len(old)-1]
	return t
}
