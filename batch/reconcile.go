package batch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/ledger"
)

// Mismatch texts of the reconciliation report beyond those report defines.
const (
	mismatchInvoice    = "invoice number differs"
	mismatchNotChecked = "not checked"
)

// ErrReconcileScope is returned when a reconciliation's scope makes no sense: both a run and a
// date, or a run that is itself a reconciliation.
var ErrReconcileScope = errors.New("reconcile: invalid scope")

// ReconcileOptions says what a reconciliation covers. With neither RunID nor Since it covers every
// payout not yet final. With one of them it covers that scope whole, final payouts included, so
// that the report ties out to the files: each such payout is looked up again.
type ReconcileOptions struct {
	RunID     string    // the rows of this run's file
	Since     time.Time // the files run, and the payouts recorded, at or after this time
	ReportDir string    // default: Config.ReportDir
	// FailedWithin adds, to a reconciliation of every payout not yet final, the rows FAILED by a
	// refusal of their create in this last while: a service may refuse a create it made. Zero:
	// none.
	FailedWithin time.Duration
}

// ReconcileResult is the outcome of one reconciliation: the `--json` summary of `payout reconcile`.
// Payouts = Succeeded + Failed + Pending + Unknown + NotSent + Rejected.
type ReconcileResult struct {
	RunID     string `json:"run_id"`
	Scope     string `json:"scope"`
	Payouts   int    `json:"payouts"`
	LookedUp  int    `json:"looked_up"`
	Succeeded int    `json:"succeeded"`
	Failed    int    `json:"failed"`
	Pending   int    `json:"pending"`
	Unknown   int    `json:"unknown"`
	NotSent   int    `json:"not_sent"`
	Rejected  int    `json:"rejected"`
	// Changed counts the payouts whose ledger state this reconciliation moved.
	Changed int `json:"changed"`
	// Mismatches counts the rows flagged in the report (NotChecked ones included).
	Mismatches int `json:"mismatches"`
	// ToResend counts the payouts whose outcome was unknown and that were proven never created:
	// they are READY again and the next run of their file sends them. Reconcile never sends.
	ToResend    int             `json:"to_resend"`
	NotChecked  int             `json:"not_checked"`
	TotalAmount decimal.Decimal `json:"total_amount"`
	Reports     []string        `json:"reports"`
	ExitCode    int             `json:"exit_code"`
	Aborted     string          `json:"aborted,omitempty"`
}

// Reconcile looks up by external_invoice_ref every payout of its scope that can have changed at
// the service, records what changed (with events under a ledger run of kind "reconcile"), flags
// what does not match, and writes a reconciliation report. It never sends a payout: an UNKNOWN row
// proven never created goes back to READY for the next run of its file.
//
// Lookups go through Config.Limiter and Config.Workers, with the run's retry policy and circuit
// breaker. The returned error is non-nil for a scope that makes no sense (ErrReconcileScope, or
// ledger.ErrNotFound for an unknown run) and for infrastructure failures (ledger, report files); a
// service that stops answering is not an error but ExitCode 1, with everything found so far
// recorded and reported.
func (r *Runner) Reconcile(ctx context.Context, opts ReconcileOptions) (ReconcileResult, error) {
	cfg := r.cfg
	db := cfg.Ledger
	if db == nil || cfg.Service == nil {
		return ReconcileResult{}, errors.New("reconcile: a ledger and a service are required")
	}
	if opts.RunID != "" && !opts.Since.IsZero() {
		return ReconcileResult{}, fmt.Errorf("%w: give a run or a date, not both", ErrReconcileScope)
	}
	if opts.ReportDir == "" {
		opts.ReportDir = cfg.ReportDir
	}
	bg := context.WithoutCancel(ctx)
	var scopeRun ledger.Run
	if opts.RunID != "" {
		var err error
		if scopeRun, err = db.GetRun(bg, opts.RunID); err != nil {
			return ReconcileResult{}, err
		}
		if scopeRun.Kind == "reconcile" {
			return ReconcileResult{}, fmt.Errorf("%w: run %s is a reconciliation, not a file's run", ErrReconcileScope, opts.RunID)
		}
	}

	started := cfg.Now()
	res := ReconcileResult{RunID: NewRunID(started)}
	log := cfg.Logger.With("run", res.RunID, "kind", "reconcile")
	if err := db.AddRun(bg, ledger.Run{ID: res.RunID, Kind: "reconcile", StartedAt: started, Status: "running"}); err != nil {
		return res, err
	}
	// The ledger lock is held: a row still SUBMITTING belongs to a process that died.
	if err := recoverInterrupted(bg, db, res.RunID); err != nil {
		return res, r.abandon(bg, res, err)
	}
	scope, entries, err := r.reconScope(bg, opts, scopeRun)
	if err != nil {
		return res, r.abandon(bg, res, err)
	}
	res.Scope = scope
	before, err := db.Lookup(bg, entryRefs(entries))
	if err != nil {
		return res, r.abandon(bg, res, err)
	}

	rc := &reconciliation{lookups: &lookups{r: r, log: log, runID: res.RunID}, views: make(map[string]serviceView)}
	tasks, looked := reconTasks(entries, before, opts.RunID != "" || !opts.Since.IsZero(), cfg.Now())
	res.LookedUp = len(tasks)
	log.Info("reconcile started", "scope", scope, "payouts", len(entries), "lookups", len(tasks))
	p := &pool{cfg: cfg, log: log, handle: rc.check, throttleBreaker: maxThrottled}
	aborted := p.run(ctx, tasks, 0, len(tasks))

	after, err := db.Lookup(bg, entryRefs(entries))
	if err != nil {
		return res, r.abandon(bg, res, err)
	}
	rows := rc.rows(entries, before, after, looked, aborted != nil)
	res = tallyRecon(res, rows, before, after)
	switch {
	case errors.Is(aborted, errThrottled) || (aborted == nil && rc.throttledRows.Load() > 0):
		res.ExitCode = ExitAborted
		res.Aborted = fmt.Sprintf("the service is throttling lookups (HTTP 429): %d payouts not checked; run reconcile again later", res.NotChecked)
		log.Warn("reconcile stopped: " + res.Aborted)
	case aborted != nil:
		res.ExitCode, res.Aborted = ExitAborted, aborted.Error()
	case res.NotChecked > 0:
		// The service never answered for some payouts: the reconciliation is incomplete, as if stopped.
		res.ExitCode = ExitAborted
		res.Aborted = fmt.Sprintf("%d payouts could not be looked up: the service did not answer", res.NotChecked)
	case res.Payouts-stillRefused(entries, after) != res.Succeeded || res.Mismatches > 0:
		// A refusal re-checked and still not at the service was reported when it failed: it does
		// not make every reconcile of the following days exit 4.
		res.ExitCode = ExitAttention
	default:
		res.ExitCode = ExitOK
	}

	ended := cfg.Now()
	paths, err := report.WriteReconciliation(opts.ReportDir, report.ReconSummary{ID: res.RunID, Started: started, Ended: ended, Scope: scope}, rows)
	if err != nil {
		return res, r.abandon(bg, res, fmt.Errorf("write reconciliation report: %w", err))
	}
	res.Reports = paths.List()
	status := "finished"
	if res.ExitCode == ExitAborted {
		status = "aborted"
	}
	if err := db.FinishRun(bg, res.RunID, status, res.ExitCode, ended); err != nil {
		return res, err
	}
	log.Info("reconcile finished", "exit", res.ExitCode, "succeeded", res.Succeeded, "pending", res.Pending,
		"failed", res.Failed, "unknown", res.Unknown, "not_sent", res.NotSent, "mismatches", res.Mismatches, "changed", res.Changed)
	return res, nil
}

// stillRefused counts the re-checked refusals that are still FAILED.
func stillRefused(entries []reconEntry, after map[string]ledger.Payout) int {
	n := 0
	for _, e := range entries {
		if e.recheck && after[e.ref].State == ledger.Failed {
			n++
		}
	}
	return n
}

// abandon closes the reconcile run as aborted and returns err.
func (r *Runner) abandon(ctx context.Context, res ReconcileResult, err error) error {
	if ferr := r.cfg.Ledger.FinishRun(ctx, res.RunID, "aborted", ExitAborted, r.cfg.Now()); ferr != nil {
		return errors.Join(err, ferr)
	}
	return err
}

// reconEntry is one row of a reconciliation: an input row of a file, or a payout.
type reconEntry struct {
	runID      string
	line       int
	ref        string
	recipient  string
	account    string
	amount     decimal.Decimal
	rejected   bool   // a rejected input row: there is no payout
	reason     string // why it was rejected
	unrecorded bool   // a valid row of a file rejected as a whole: never recorded as a payout
	recheck    bool   // a recent refusal (FailedWithin), FAILED already: looked up in case the service holds it
}

func entryRefs(entries []reconEntry) []string {
	refs := make([]string, 0, len(entries))
	for _, e := range entries {
		if !e.rejected {
			refs = append(refs, e.ref)
		}
	}
	return refs
}

func payoutEntry(p ledger.Payout) reconEntry {
	return reconEntry{runID: p.RunID, line: p.Line, ref: p.Ref, recipient: p.Recipient, account: p.Account, amount: p.Amount}
}

// reconScope lists the rows a reconciliation reports, in report order.
func (r *Runner) reconScope(ctx context.Context, opts ReconcileOptions, run ledger.Run) (string, []reconEntry, error) {
	db := r.cfg.Ledger
	switch {
	case opts.RunID != "":
		entries, _, err := runEntries(ctx, db, run.ID, nil)
		if err != nil {
			return "", nil, err
		}
		scope := "run " + run.ID
		if run.File != "" {
			scope += " (" + run.File + ")"
		}
		return scope, entries, nil
	case !opts.Since.IsZero():
		runs, err := db.Runs(ctx)
		if err != nil {
			return "", nil, err
		}
		var entries []reconEntry
		seen := make(map[string]bool)
		for _, run := range runs {
			if run.StartedAt.Before(opts.Since) || run.Kind == "reconcile" || run.Kind == "dry-run" {
				continue
			}
			more, _, err := runEntries(ctx, db, run.ID, seen)
			if err != nil {
				return "", nil, err
			}
			entries = append(entries, more...)
		}
		// Payouts recorded since the date by a run that began before it.
		payouts, err := db.List(ctx, ledger.Filter{Since: opts.Since})
		if err != nil {
			return "", nil, err
		}
		for _, p := range payouts {
			if !seen[p.Ref] {
				seen[p.Ref] = true
				entries = append(entries, payoutEntry(p))
			}
		}
		return "since " + opts.Since.Format(time.RFC3339), entries, nil
	}
	payouts, err := db.List(ctx, ledger.Filter{States: []ledger.State{ledger.Submitted, ledger.Unknown, ledger.Submitting, ledger.Ready}})
	if err != nil {
		return "", nil, err
	}
	entries := make([]reconEntry, 0, len(payouts))
	for _, p := range payouts {
		entries = append(entries, payoutEntry(p))
	}
	if opts.FailedWithin <= 0 {
		return "every payout not yet final", entries, nil
	}
	refused, err := r.recentRefusals(ctx, opts.FailedWithin)
	if err != nil {
		return "", nil, err
	}
	for _, p := range refused {
		e := payoutEntry(p)
		e.recheck = true
		entries = append(entries, e)
	}
	return fmt.Sprintf("every payout not yet final, and those refused in the last %s", days(opts.FailedWithin)), entries, nil
}

// recentRefusals is the FAILED rows the service never held as payouts (no invoice number: their
// create was refused) that failed within the last while.
func (r *Runner) recentRefusals(ctx context.Context, within time.Duration) ([]ledger.Payout, error) {
	failed, err := r.cfg.Ledger.List(ctx, ledger.Filter{States: []ledger.State{ledger.Failed}})
	if err != nil {
		return nil, err
	}
	cutoff := r.cfg.Now().Add(-within)
	var out []ledger.Payout
	for _, p := range failed {
		if refusedCreate(p) && !p.UpdatedAt.Before(cutoff) {
			out = append(out, p)
		}
	}
	return out, nil
}

// refusedCreate is a FAILED row whose create the service refused: it never gave an invoice number.
func refusedCreate(p ledger.Payout) bool {
	return p.State == ledger.Failed && p.InvoiceNo == ""
}

func days(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		if n := int(d / (24 * time.Hour)); n != 1 {
			return fmt.Sprintf("%d days", n)
		}
		return "day"
	}
	return d.String()
}

// runEntries is a run's input rows. A payout seen already (a rerun of the same file) is left out
// when seen is not nil, so that no payout counts twice.
func runEntries(ctx context.Context, db *ledger.DB, runID string, seen map[string]bool) ([]reconEntry, map[string]bool, error) {
	lines, err := db.RunReport(ctx, runID)
	if err != nil {
		return nil, nil, err
	}
	entries := make([]reconEntry, 0, len(lines))
	for _, l := range lines {
		rr := l.Row
		e := reconEntry{runID: runID, line: rr.Line, ref: rr.Ref, recipient: rr.Recipient, account: rr.Account,
			rejected: rr.Rejected, reason: rr.Reason}
		if amount, err := decimal.NewFromString(rr.Amount); err == nil {
			e.amount = amount
		}
		if !rr.Rejected {
			if l.Payout == nil {
				e.unrecorded = true
			} else if seen != nil {
				if seen[rr.Ref] {
					continue
				}
				seen[rr.Ref] = true
			}
		}
		entries = append(entries, e)
	}
	return entries, seen, nil
}

// reconTasks is a lookup per payout that can have changed at the service. Payouts the service
// accepted are looked up first: if one of them is "not found", lookups prove nothing and no
// UNKNOWN row is declared never created.
func reconTasks(entries []reconEntry, current map[string]ledger.Payout, scoped bool, now time.Time) ([]task, map[string]bool) {
	var tasks []task
	lookups := make(map[string]bool)
	for _, e := range entries {
		p, ok := current[e.ref]
		if e.rejected || e.unrecorded || !ok || lookups[e.ref] {
			continue
		}
		at := now
		switch p.State {
		case ledger.Unknown:
		case ledger.Submitted:
			at = now.Add(-time.Second)
		case ledger.Succeeded, ledger.Failed:
			// Unscoped, the only final rows listed are recent refusals: they are looked up.
			if !scoped && !refusedCreate(p) {
				continue
			}
			at = now.Add(-time.Second)
		default:
			// READY was never sent (or was proven never created): nothing to look up.
			continue
		}
		lookups[e.ref] = true
		tasks = append(tasks, task{ref: e.ref, kind: taskLookup, at: at})
	}
	return tasks, lookups
}

// reconciliation is the state of one reconciliation's lookups, shared by its workers.
type reconciliation struct {
	*lookups
	viewsMu sync.Mutex
	views   map[string]serviceView
	// throttledRows counts the payouts left not checked because every lookup of them was a 429.
	throttledRows atomic.Int64
}

// serviceView is what the service said of one payout, and what reconcile made of it.
type serviceView struct {
	found      bool
	payout     api.Payout
	notFound   bool
	failed     string // the last error when the service never answered
	mismatches []string
	note       string
}

func (rc *reconciliation) record(ref string, v serviceView) {
	rc.viewsMu.Lock()
	rc.views[ref] = v
	rc.viewsMu.Unlock()
}

// check is the reconciliation's lookup task: the submission's lookup, but able to compare final
// rows and to flag what differs. It never sends. A row that moved under it (a callback applied by
// `payout callbacks`, which does not take the run lock) is read and looked up again, a bounded
// number of times, rather than stopping the reconciliation.
func (rc *reconciliation) check(ctx context.Context, t task) outcome {
	o := rc.checkOnce(ctx, t)
	if o.fatal != nil && errors.Is(o.fatal, ledger.ErrStateConflict) && t.attempt+1 < rc.r.cfg.MaxLookupErrors {
		rc.log.Info("payout changed during its lookup; looking it up again", "ref", t.ref)
		return outcome{task: t, serviceOK: true, next: &task{ref: t.ref, kind: taskLookup, at: rc.r.cfg.Now(), attempt: t.attempt + 1}}
	}
	return rc.settledByCallback(o)
}

func (rc *reconciliation) checkOnce(ctx context.Context, t task) outcome {
	cfg := rc.r.cfg
	if t.kind != taskLookup {
		rc.log.Error("reconcile refused to send a payout", "ref", t.ref)
		return outcome{task: t, rowDone: true}
	}
	p, err := cfg.Ledger.Get(ctx, t.ref)
	if err != nil {
		return outcome{task: t, fatal: err}
	}
	got, err := cfg.Service.GetPayout(ctx, t.ref)
	now := cfg.Now()
	switch verdictOf(err) {
	case lookupFound:
		rc.proven.Store(true)
		return rc.found(ctx, t, p, got)
	case lookupNotFound:
		return rc.missing(ctx, t, p, now)
	case lookupStop:
		return outcome{task: t, fatal: ErrUnauthorized}
	case lookupThrottled:
		return rc.throttled(ctx, t, p, err, now)
	}
	msg := errorText(err)
	if t.attempt+1 < cfg.MaxLookupErrors {
		return outcome{task: t, failure: true, next: &task{ref: t.ref, kind: taskLookup,
			at: now.Add(backoff(cfg.BackoffBase, cfg.BackoffMax, t.attempt)), attempt: t.attempt + 1}}
	}
	if o := rc.apply(ctx, t, ledger.Change{From: p.State, To: p.State, Error: msg,
		Detail: fmt.Sprintf("reconcile: lookup failed %d times, not checked: %s", t.attempt+1, msg)}); o != nil {
		return *o
	}
	rc.record(t.ref, serviceView{failed: msg, mismatches: []string{mismatchNotChecked}})
	return outcome{task: t, failure: true, rowDone: true}
}

// throttled handles a 429: the lookup is tried again after the wait the service asked for, within
// the run's bound on 429s; past it, the payout is reported not checked.
func (rc *reconciliation) throttled(ctx context.Context, t task, p ledger.Payout, err error, now time.Time) outcome {
	wait, retry := rc.rateLimited(err, t, now)
	if retry != nil {
		return outcome{task: t, throttled: true, pause: now.Add(wait), next: retry}
	}
	msg := errorText(err)
	if o := rc.apply(ctx, t, ledger.Change{From: p.State, To: p.State, Error: msg,
		Detail: fmt.Sprintf("reconcile: lookup rate limited %d times in a row (HTTP 429), not checked: %s", t.limited+1, msg)}); o != nil {
		return *o
	}
	rc.throttledRows.Add(1)
	rc.record(t.ref, serviceView{failed: "the service is throttling lookups (HTTP 429)", mismatches: []string{mismatchNotChecked}})
	return outcome{task: t, throttled: true, pause: now.Add(wait), rowDone: true}
}

// found records what the service holds for a payout. A final state of the ledger is never
// overwritten: a service that now says otherwise is flagged and the event keeps what it said.
func (rc *reconciliation) found(ctx context.Context, t task, p ledger.Payout, got api.Payout) outcome {
	view := serviceView{found: true, payout: got}
	diffs := differences(p, got)
	for _, d := range diffs {
		view.mismatches = append(view.mismatches, d.kind)
	}
	invoice := p.InvoiceNo
	if invoice == "" {
		invoice = got.PayoutInvoiceNo
	}
	const how = "reconcile: found by external_invoice_ref"
	status := got.TransactionStatus
	var changes []ledger.Change
	switch p.State {
	case ledger.Unknown:
		changes = afterFound(p, got, how, diffs)
		view.note = "the outcome was unknown; the service has it"
	case ledger.Submitted:
		changes = afterFound(p, got, how, diffs)
		if !got.Final() {
			view.note = "not final at the service yet"
		}
	case ledger.Failed:
		if refusedCreate(p) {
			// The service refused the create and made the payout all the same.
			changes = afterFound(p, got, how+": refused when it was sent, but the service holds it", diffs)
			view.note = "refused when it was sent, but the service holds it: never pay it again under a new reference"
			break
		}
		fallthrough
	case ledger.Succeeded:
		found := how
		if text := differenceText(diffs); text != "" {
			found += " (" + text + ")"
		}
		if want := finalStatus(p.State); status != want {
			view.mismatches = append(view.mismatches, report.MismatchFinalChanged)
			view.note = fmt.Sprintf("the service now reports %s; the ledger keeps %s: investigate", orNone(status), p.State)
			changes = []ledger.Change{{From: p.State, To: p.State,
				Detail: fmt.Sprintf("%s: the service now reports status %s for a payout the ledger holds as %s; the ledger's final state is kept: investigate",
					found, orNone(status), p.State)}}
		} else if invoice != p.InvoiceNo || len(diffs) > 0 {
			changes = []ledger.Change{{From: p.State, To: p.State, InvoiceNo: invoice,
				Detail: fmt.Sprintf("%s: invoice %s, status %s, as the ledger has it", found, orNone(invoice), orNone(status))}}
		}
	}
	if o := rc.apply(ctx, t, changes...); o != nil {
		return *o
	}
	rc.record(t.ref, view)
	return outcome{task: t, serviceOK: true, rowDone: true}
}

// missing handles "not found". For an UNKNOWN row it is the run's decision (look again after a
// spacing, or declare it never created once the grace has passed and lookups are proven to work).
// For a payout the service accepted, "not found" is a mismatch, and a sign that "not found" cannot
// be trusted to resend anything.
func (rc *reconciliation) missing(ctx context.Context, t task, p ledger.Payout, now time.Time) outcome {
	switch {
	case p.State == ledger.Unknown:
		rc.record(t.ref, serviceView{notFound: true})
		return rc.notFound(ctx, t, p, now, false)
	case refusedCreate(p):
		// Refused when it was sent: the service created nothing, and says so.
		if !FailureConfirmed(p.InvoiceNo, p.LastError) && !rc.broken.Load() {
			if o := rc.apply(ctx, t, ledger.Change{From: p.State, To: p.State, Error: confirmedError(p.LastError),
				Detail: "reconcile: refused when it was sent, and not found by external_invoice_ref: nothing was created"}); o != nil {
				return *o
			}
		}
		rc.record(t.ref, serviceView{notFound: true, note: "not at the service: it refused the payout when it was sent"})
		return outcome{task: t, serviceOK: true, rowDone: true}
	}
	rc.broken.Store(true)
	if o := rc.apply(ctx, t, ledger.Change{From: p.State, To: p.State,
		Detail: fmt.Sprintf("reconcile: not found by external_invoice_ref although the service accepted it (invoice %s); the ledger keeps %s: investigate",
			orNone(p.InvoiceNo), p.State)}); o != nil {
		return *o
	}
	rc.record(t.ref, serviceView{notFound: true, mismatches: []string{report.MismatchUnknown},
		note: "the service does not know this payout, which it accepted: investigate"})
	return outcome{task: t, serviceOK: true, rowDone: true}
}

func finalStatus(s ledger.State) string {
	if s == ledger.Succeeded {
		return api.StatusSuccess
	}
	return api.StatusFailed
}

// rows turns the entries into report rows with the ledger's state after the lookups.
func (rc *reconciliation) rows(entries []reconEntry, before, after map[string]ledger.Payout, lookups map[string]bool, aborted bool) []report.ReconRow {
	rc.viewsMu.Lock()
	defer rc.viewsMu.Unlock()
	rows := make([]report.ReconRow, 0, len(entries))
	for _, e := range entries {
		row := report.ReconRow{Ref: e.ref, Line: e.line, RunID: e.runID, Recipient: e.recipient, Account: e.account, LedgerAmount: e.amount}
		p, recorded := after[e.ref]
		switch {
		case e.rejected:
			row.LedgerState, row.Message = string(ledger.Rejected), e.reason
		case e.unrecorded || !recorded:
			row.LedgerState = string(ledger.Ready)
			row.Message = "not submitted: the file was rejected; fix the rejected rows and run it again"
		default:
			row.LedgerState, row.LedgerAmount, row.InvoiceNo = string(p.State), p.Amount, p.InvoiceNo
			row.Mismatches, row.Message = rc.describe(&row, p, before[e.ref], lookups[e.ref], aborted)
		}
		rows = append(rows, row)
	}
	return rows
}

// describe fills the service's side of a row and says what a reader needs to know about it.
func (rc *reconciliation) describe(row *report.ReconRow, p, was ledger.Payout, looked, aborted bool) ([]string, string) {
	v, ok := rc.views[p.Ref]
	var notes []string
	if was.State != p.State {
		notes = append(notes, fmt.Sprintf("%s → %s", was.State, p.State))
	}
	switch {
	case !looked:
	case !ok && aborted:
		return []string{mismatchNotChecked}, "not looked up: reconcile stopped first; run it again"
	case !ok:
		return []string{mismatchNotChecked}, "not looked up"
	case v.failed != "":
		return v.mismatches, "the service did not answer: " + v.failed
	case v.found:
		row.ServiceStatus = v.payout.TransactionStatus
		if !v.payout.Value.IsZero() {
			amount := v.payout.Value
			row.ServiceAmount = &amount
		}
		row.ServiceAccount = v.payout.PayoutAccountNumber
		if row.InvoiceNo == "" {
			row.InvoiceNo = v.payout.PayoutInvoiceNo
		}
	}
	switch p.State {
	case ledger.Unknown, ledger.Submitting:
		if Stuck(p) {
			notes = append(notes, StuckMessage(p.Ref, p.Attempts))
		} else if v.notFound {
			notes = append(notes, fmt.Sprintf("not found by %d lookups; outcome still unknown: see `payout status %s`", p.NotFoundCount, p.Ref))
		} else {
			notes = append(notes, "outcome unknown")
		}
	case ledger.Ready:
		if was.State == ledger.Unknown {
			notes = append(notes, "never created (not found by every lookup while lookups work): the next run of its file sends it")
		} else {
			notes = append(notes, "not sent: run its file again")
		}
	case ledger.Failed:
		if v.note == "" && p.LastError != "" {
			notes = append(notes, p.LastError)
		}
	}
	if v.note != "" {
		notes = append(notes, v.note)
	}
	return v.mismatches, strings.Join(notes, "; ")
}

// tallyRecon counts report rows by ledger state into res.
func tallyRecon(res ReconcileResult, rows []report.ReconRow, before, after map[string]ledger.Payout) ReconcileResult {
	res.Payouts = len(rows)
	total := decimal.Zero
	for _, row := range rows {
		total = total.Add(row.LedgerAmount)
		switch ledger.State(row.LedgerState) {
		case ledger.Succeeded:
			res.Succeeded++
		case ledger.Failed:
			res.Failed++
		case ledger.Submitted:
			res.Pending++
		case ledger.Rejected:
			res.Rejected++
		case ledger.Ready:
			res.NotSent++
		default:
			res.Unknown++
		}
		if len(row.Mismatches) > 0 {
			res.Mismatches++
		}
		for _, m := range row.Mismatches {
			if m == mismatchNotChecked {
				res.NotChecked++
			}
		}
	}
	for ref, p := range after {
		was, ok := before[ref]
		if ok && was.State != p.State {
			res.Changed++
			if was.State == ledger.Unknown && p.State == ledger.Ready {
				res.ToResend++
			}
		}
	}
	res.TotalAmount = total
	return res
}
