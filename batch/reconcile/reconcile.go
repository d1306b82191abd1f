package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/pool"
	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/batch/runid"
	"github.com/payout/payout/batch/runs"
	"github.com/payout/payout/ledger"
)

// ErrScope is returned when a reconciliation's scope makes no sense: both a run and a
// date, or a run that is itself a reconciliation.
var ErrScope = errors.New("reconcile: invalid scope")

// Options says what a reconciliation covers. With neither RunID nor Since it covers every
// payout not yet final. With one of them it covers that scope whole, final payouts included, so
// that the report ties out to the files: each such payout is looked up again.
type Options struct {
	RunID     string    // the rows of this run's file
	Since     time.Time // the files run, and the payouts recorded, at or after this time
	ReportDir string    // default: the Config's ReportDir
	// FailedWithin adds, to a reconciliation of every payout not yet final, the rows FAILED by a
	// refusal of their create in this last while: a service may refuse a create it made. Zero:
	// none.
	FailedWithin time.Duration
}

// Result is the outcome of one reconciliation: the `--json` summary of `payout reconcile`.
// Payouts = Succeeded + Failed + Pending + Unknown + NotSent + Rejected.
type Result struct {
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
	// UnreadableAmounts counts the rows whose amount in their file is no number: not in
	// TotalAmount, and listed in the report.
	UnreadableAmounts int      `json:"unreadable_amounts,omitempty"`
	Reports           []string `json:"reports"`
	ExitCode          int      `json:"exit_code"`
	Aborted           string   `json:"aborted,omitempty"`
	// NameMismatches counts the payouts whose bank holds another name for the account than the
	// recipient (from their callbacks): flagged in the report, never a reason to exit non-zero.
	NameMismatches int `json:"name_mismatches"`

	// RetryFiles are the retry files written again for the runs whose unpaid rows changed.
	RetryFiles []string `json:"retry_files,omitempty"`
	// HeldTwice names the references the service holds under two invoice numbers, as this
	// host's journal of late sends shows them (batch/journal): a person must recall one.
	HeldTwice []string `json:"held_twice,omitempty"`
}

// Run looks up by external_invoice_ref every payout of its scope that can have changed at the
// service, records what changed (with events under a ledger run of kind "reconcile"), flags what
// does not match, and writes a reconciliation report. It never sends a payout: an UNKNOWN row
// proven never created goes back to READY for the next run of its file.
//
// The scope is walked a chunk of Config.ChunkRows rows at a time: each chunk is looked up, and
// its report rows written, before the next is read, so that a scope of any size is held a chunk
// at a time. Lookups go through cfg.Limiter and cfg.Workers, with the run's retry policy and
// circuit breaker (package lookup). The returned error is non-nil for a scope
// that makes no sense (ErrScope, or ledger.ErrNotFound for an unknown run) and for infrastructure
// failures (ledger, report files); a service that stops answering is not an error but ExitCode 1,
// with everything found so far recorded and reported, and the rest reported not checked.
func Run(ctx context.Context, cfg batch.Config, opts Options) (Result, error) {
	rc := &reconciler{cfg: cfg.WithDefaults()}
	db := rc.cfg.Ledger
	if opts.ReportDir == "" {
		opts.ReportDir = rc.cfg.ReportDir
	}
	bg := context.WithoutCancel(ctx)
	scopeRun, err := rc.scopeRun(bg, opts)
	if err != nil {
		return Result{}, err
	}

	started := rc.cfg.Now()
	res := Result{RunID: runid.New(started)}
	log := rc.cfg.Logger.With("run", res.RunID, "kind", "reconcile")
	if err := runs.Open(bg, db, ledger.Run{ID: res.RunID, Kind: ledger.KindReconcile, StartedAt: started}); err != nil {
		return res, err
	}
	// A row still SUBMITTING whose process is gone (rc.cfg.Liveness) may have been sent.
	if err := rc.cfg.RecoverInterrupted(bg, res.RunID); err != nil {
		return res, rc.abandon(bg, res, err)
	}
	scope, scopeRows, expected, err := rc.scope(bg, opts, scopeRun)
	if err != nil {
		return res, rc.abandon(bg, res, err)
	}
	res.Scope = scope
	log.Info("reconcile started", "scope", scope)
	pass := &chunks{rc: rc, log: log, checker: newChecker(rc.cfg, log, res.RunID, expected), total: decimal.Zero,
		scoped: opts.RunID != "" || !opts.Since.IsZero(), runs: make(map[string]bool)}
	var ended time.Time
	paths, summary, err := report.WriteReconciliationStream(opts.ReportDir, res.RunID, func(add func(report.ReconRow)) (report.ReconSummary, error) {
		pass.err = pass.walk(ctx, scopeRows, add)
		pass.checker.finish()
		ended = rc.cfg.Now()
		return report.ReconSummary{ID: res.RunID, Started: started, Ended: ended, Scope: scope,
			ChainHead: runs.ChainHeadText(bg, db), Zone: rc.cfg.Zone}, pass.err
	})
	res = exit(log, pass.result(res), checked{stopped: pass.stopped, throttled: pass.throttled}, pass.refused)
	if pass.err != nil {
		return res, rc.abandon(bg, res, pass.err)
	}
	if err != nil {
		return res, rc.abandon(bg, res, fmt.Errorf("write reconciliation report: %w", err))
	}
	res.Reports = paths.List()
	res.UnreadableAmounts = summary.Unreadable
	if sum, ok := summary.TiesOut(); !ok {
		log.Error("the reconciliation report does not tie out: its amounts by state do not add up to its total",
			"total", summary.Total.StringFixed(2), "sum_by_state", sum.StringFixed(2), "report", paths.HTML)
	}
	if res.RetryFiles, err = writeRetryFiles(bg, db, opts.ReportDir, pass.runs, rc.cfg.ChunkRows, ended); err != nil {
		return res, rc.abandon(bg, res, fmt.Errorf("write retry files: %w", err))
	}
	if err := runs.Close(bg, db, res.RunID, res.ExitCode, ended); err != nil {
		return res, err
	}
	log.Info("reconcile finished", "exit", res.ExitCode, "payouts", res.Payouts, "looked_up", res.LookedUp, "succeeded", res.Succeeded,
		"pending", res.Pending, "failed", res.Failed, "unknown", res.Unknown, "not_sent", res.NotSent, "mismatches", res.Mismatches, "changed", res.Changed)
	return res, nil
}

// reconciler is one reconciliation's configuration.
type reconciler struct {
	cfg batch.Config
}

// scopeRun checks that opts make sense and returns the run they scope the reconciliation to, if any.
func (rc *reconciler) scopeRun(ctx context.Context, opts Options) (ledger.Run, error) {
	if rc.cfg.Ledger == nil || rc.cfg.Service == nil {
		return ledger.Run{}, errors.New("reconcile: a ledger and a service are required")
	}
	if opts.RunID == "" {
		return ledger.Run{}, nil
	}
	if !opts.Since.IsZero() {
		return ledger.Run{}, fmt.Errorf("%w: give a run or a date, not both", ErrScope)
	}
	run, err := rc.cfg.Ledger.GetRun(ctx, opts.RunID)
	if err != nil {
		return ledger.Run{}, err
	}
	if run.Kind == ledger.KindReconcile {
		return ledger.Run{}, fmt.Errorf("%w: run %s is a reconciliation, not a file's run", ErrScope, opts.RunID)
	}
	return run, nil
}

// exit sets the reconciliation's exit code, and why it stopped when it did. refused counts the
// re-checked refusals still not at the service: they were reported when they failed, and do not
// make every reconcile of the following days exit 4.
func exit(log *slog.Logger, res Result, checked checked, refused int) Result {
	switch aborted := checked.stopped; {
	case errors.Is(aborted, pool.ErrThrottled) || (aborted == nil && checked.throttled > 0):
		res.ExitCode = exitcode.Aborted
		res.Aborted = fmt.Sprintf("the service is throttling lookups (HTTP 429): %d payouts not checked; run reconcile again later", res.NotChecked)
		log.Warn("reconcile stopped: " + res.Aborted)
	case aborted != nil:
		res.ExitCode, res.Aborted = exitcode.Aborted, aborted.Error()
	case res.NotChecked > 0:
		// The service never answered for some payouts: the reconciliation is incomplete, as if stopped.
		res.ExitCode = exitcode.Aborted
		res.Aborted = fmt.Sprintf("%d payouts could not be looked up: the service did not answer", res.NotChecked)
	case res.Payouts-refused != res.Succeeded || res.Mismatches > 0:
		res.ExitCode = exitcode.Attention
	default:
		res.ExitCode = exitcode.OK
	}
	return res
}

// abandon closes the reconcile run as aborted and returns err.
func (rc *reconciler) abandon(ctx context.Context, res Result, err error) error {
	if ferr := runs.Close(ctx, rc.cfg.Ledger, res.RunID, exitcode.Aborted, rc.cfg.Now()); ferr != nil {
		return errors.Join(err, ferr)
	}
	return err
}
