package batch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"golang.org/x/time/rate"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/intake"
	"github.com/payout/payout/batch/journal"
	"github.com/payout/payout/batch/lookup"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/pool"
	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/repeats"
	"github.com/payout/payout/batch/runid"
	"github.com/payout/payout/batch/runs"
	"github.com/payout/payout/batch/send"
	"github.com/payout/payout/ledger"
)

// Service is what the runner needs of the payout service. *api.Client implements it; errors are
// classified with api.KindOf.
type Service interface {
	ListProviders(ctx context.Context) ([]api.Provider, error)
	CreatePayout(ctx context.Context, req api.CreatePayoutRequest) (api.CreateResult, error)
	GetPayout(ctx context.Context, reference string) (api.Payout, error)
}

// Defaults of the run's tunables.
const (
	DefaultRate         = 10
	DefaultUnknownGrace = 2 * time.Minute
	// DefaultInFlightHold is Config.InFlightHold of the commands: a host paused or cut off after
	// its last proof of its claim sends nothing once it wakes (it proves its claim again first),
	// so the hold covers only a pause in the instant between that proof and its request, and the
	// request's own time; ten minutes is far past both, and past the server's 20 seconds to take
	// a silent host for gone.
	DefaultInFlightHold     = 10 * time.Minute
	DefaultNotFoundLookups  = 3
	DefaultBreakerThreshold = 10
	DefaultMaxLookupErrors  = 8
	DefaultBackoffBase      = 200 * time.Millisecond
	DefaultBackoffMax       = 30 * time.Second
	// DefaultMaxRows bounds a file: far above any payroll, low enough that a wrong file (a whole
	// export, say) is refused before it fills memory.
	DefaultMaxRows = 200_000
)

// Config holds what a Runner needs. Ledger, Service and a pool reference are required to submit.
type Config struct {
	Ledger  Ledger
	Service Service
	Logger  *slog.Logger
	Now     func() time.Time
	// Clock is the pool's time: its waits for due lookups and retries. When nil, the system's
	// timers with Now telling the time; tests set a fake one so that no wait is real.
	Clock   pool.Clock
	Limiter pool.Limiter
	// Process is this process as the payouts it sends name it (ledger.Process.Claimant); a new
	// one when empty.
	Process string
	// Liveness tells whether the process a SUBMITTING payout names still runs: only the payouts
	// of a process that is gone are recovered. When nil, every process but this one is gone (the
	// ledger's file lock is held, or one runner is the only payer).
	Liveness ledger.Liveness
	// Files, when set, keeps every other process off the file a run pays (ledger.Hold): a run
	// takes its file before it records or sends anything of it, and stops with the error of a
	// file another process pays (ledger.ErrLocked, naming that process).
	Files FileKeeper
	// Fence, when set, is proved right before every POST (ledger.Hold is one): a process that
	// cannot prove it still holds its claims sends nothing. When nil, claims are never taken
	// over while the process lives (the ledger's file lock).
	Fence ledger.Fence
	// InFlightHold is, on a ledger several hosts share, the least time a payout whose outcome is
	// unknown is only looked up before it may be sent again, however short UnknownGrace: a host
	// found gone may be paused, or cut off, with its request still to leave.
	InFlightHold time.Duration
	// Journal, when set, keeps a create sent after this process lost its claim (batch/journal):
	// the ledger may not be there to hold it.
	Journal func(journal.Entry) error
	// Makers, when set, names the principals who dropped the file of the given SHA-256 (the web
	// console records them): their signatures do not count among its approvals.
	Makers func(fileSHA256 string) []string
	// AfterIntent, when set, is called once a row's intent is recorded, before its claim is
	// proved and its POST sent; BeforePost once its claim is proved and its turn taken, right
	// before the POST: where the tests pause a process, as a host is paused.
	AfterIntent, BeforePost func(ref string)
	sendState               *send.State // shared by the Runners of one Config

	// Workers is the number of concurrent requests; 0 sizes the pool from the rate and the
	// service's observed latency (pool.AutoStartWorkers up to pool.AutoMaxWorkers).
	Workers        int
	VirtualPoolRef string
	CallbackURL    string
	RedirectURL    string

	DryRun       bool
	AllowPartial bool
	// ChunkRows is how many rows are checked, recorded and handed to the workers at a time
	// (intake.DefaultChunkRows when 0).
	ChunkRows int
	ReportDir string
	// Zone is the operator's time zone: the reports, and the notes and messages people read,
	// show times in it (UTC when nil).
	Zone *time.Location
	// AllowPaidElsewhere accepts rows skipped because a run of another file paid them: they are
	// still reported, but do not make the exit code 4.
	AllowPaidElsewhere bool

	// Repeats says which rows are held as possible repeats of payouts to the same account, bank
	// and amount under other references.
	Repeats repeats.Policy

	// Approval says who may sign a plan and how long a signature may hold; how many signatures a
	// file needs is the ledger's policy, never the configuration's.
	Approval approval.Policy

	Read     read.Options
	Validate read.ValidateOptions // Providers is filled from the service at the start of each run

	// UnknownGrace is how long a row whose outcome is unknown must have been reported "not found"
	// by NotFoundLookups spaced lookups before it may be sent again.
	UnknownGrace    time.Duration
	NotFoundLookups int
	// NoResendUnknown keeps every unresolved row UNKNOWN for manual reconciliation.
	NoResendUnknown bool
	// BreakerThreshold consecutive service failures stop dispatching (exit 1).
	BreakerThreshold int
	MaxLookupErrors  int
	BackoffBase      time.Duration
	BackoffMax       time.Duration

	// Progress, when set, is called as rows reach an answer (done of total).
	Progress func(done, total int)
	// SignHead, when set, signs the statement of the chain head a run's reports print
	// (HeadStatement), written beside them with its signature.
	SignHead func(ctx context.Context, statement []byte) ([]byte, error)
	// Waiting, when set, is called when the run has nothing to do but wait for the grace of
	// payouts whose outcome is unknown (n payouts, until then), and with 0 once it works again.
	Waiting func(n int, until time.Time)
}

// Runner pays files. One Runner may run several files one after the other.
type Runner struct {
	cfg Config
	// reportName, when set, names the reports instead of the input file's name.
	reportName string
}

// NewRunner fills defaults in cfg and returns a Runner.
func NewRunner(cfg Config) *Runner {
	return &Runner{cfg: cfg.WithDefaults()}
}

// WithDefaults is c with a default in every field left unset, as a Runner uses it.
func (c Config) WithDefaults() Config {
	cfg := c
	cfg.Ledger = noLedger(cfg.Ledger)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Now == nil && cfg.Clock != nil {
		cfg.Now = cfg.Clock.Now
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Clock == nil {
		cfg.Clock = pool.WallClock(cfg.Now)
	}
	cfg.Workers = max(cfg.Workers, 0)
	if cfg.Limiter == nil {
		cfg.Limiter = rate.NewLimiter(rate.Limit(DefaultRate), 1)
	}
	if cfg.Process == "" {
		cfg.Process = ledger.NewProcess().Claimant()
	}
	if cfg.Liveness == nil {
		cfg.Liveness = onlySelf(cfg.Process)
	}
	if cfg.sendState == nil {
		cfg.sendState = send.NewState()
	}
	if cfg.UnknownGrace <= 0 {
		cfg.UnknownGrace = DefaultUnknownGrace
	}
	if cfg.NotFoundLookups <= 0 {
		cfg.NotFoundLookups = DefaultNotFoundLookups
	}
	if cfg.BreakerThreshold <= 0 {
		cfg.BreakerThreshold = DefaultBreakerThreshold
	}
	if cfg.MaxLookupErrors <= 0 {
		cfg.MaxLookupErrors = DefaultMaxLookupErrors
	}
	if cfg.BackoffBase <= 0 {
		cfg.BackoffBase = DefaultBackoffBase
	}
	if cfg.BackoffMax <= 0 {
		cfg.BackoffMax = DefaultBackoffMax
	}
	if cfg.ReportDir == "" {
		cfg.ReportDir = "reports"
	}
	if cfg.ChunkRows <= 0 {
		cfg.ChunkRows = intake.DefaultChunkRows
	}
	return cfg
}

// onlySelf is the liveness a process knows when it is the ledger's only payer (it holds the file
// lock, or it is a test's one runner): the claimant it names runs, every other one is gone.
type onlySelf string

func (s onlySelf) Alive(_ context.Context, claimant string) (bool, error) {
	return claimant != "" && claimant == string(s), nil
}

// Config is the runner's configuration, with its defaults filled in.
func (r *Runner) Config() Config { return r.cfg }

// WithReportDir returns a Runner like r that writes its reports to dir.
func (r *Runner) WithReportDir(dir string) *Runner {
	cfg := r.cfg
	cfg.ReportDir = dir
	return &Runner{cfg: cfg, reportName: r.reportName}
}

// WithRepeats returns a Runner like r that holds possible repeats as policy says.
func (r *Runner) WithRepeats(policy repeats.Policy) *Runner {
	cfg := r.cfg
	cfg.Repeats = policy
	return &Runner{cfg: cfg, reportName: r.reportName}
}

// WithMakers returns a Runner like r whose approvals do not count the signatures of the
// principals makers names for a file (Config.Makers).
func (r *Runner) WithMakers(makers func(fileSHA256 string) []string) *Runner {
	cfg := r.cfg
	cfg.Makers = makers
	return &Runner{cfg: cfg, reportName: r.reportName}
}

// WithReportName returns a Runner like r that names its reports after name, not the file's own.
func (r *Runner) WithReportName(name string) *Runner {
	return &Runner{cfg: r.cfg, reportName: name}
}

// Run validates, records, submits and reports one file. The returned error is non-nil only for
// infrastructure failures (ledger, unreadable file, service unreachable at start); rejections and
// failures of rows are in the Result and its ExitCode.
func (r *Runner) Run(ctx context.Context, path string) (Result, error) {
	cfg := r.cfg
	started := cfg.Now()
	res := Result{RunID: runid.New(started), File: path, DryRun: cfg.DryRun, StartedAt: started.UTC()}
	log := cfg.Logger.With("run", res.RunID, "file", filepath.Base(path))

	sum, err := read.FileSHA256(path)
	if err != nil {
		return res, err
	}
	res.SHA256 = sum
	done, err := r.takeFile(ctx, log, sum)
	if err != nil {
		return res, err
	}
	defer done()
	log.Info("run started", "sha256", sum, "dry_run", cfg.DryRun)
	providers, err := r.providers(ctx)
	if err != nil {
		// The service's errors name their call ("list providers: ..."); the others do not.
		if api.KindOf(err) == api.KindNone {
			err = fmt.Errorf("list providers: %w", err)
		}
		return res, outcome.ExplainAuth(err)
	}
	opts := r.intake(path, providers)
	if opts.PlanText, err = r.signaturesNeeded(ctx); err != nil {
		return res, err
	}
	if cfg.DryRun {
		return r.dryRun(ctx, log, res, opts)
	}
	if cfg.Ledger == nil {
		return res, errors.New("no ledger: a payout is never sent without one")
	}
	log.Info("reading and validating the file", "providers", len(providers))
	sv, err := intake.SurveyFile(ctx, opts)
	if err != nil {
		return res, err
	}
	log.Info("file validated", "rows", sv.Rows(), "rejected", sv.Rejected())
	res.Problems, res.Warnings = sv.Problems(), sv.Warnings()
	for _, w := range res.Warnings {
		log.Warn("row paid as read, check it", "line", w.Line, "column", w.Column, "warning", w.Reason)
	}
	// The plan, and so the approval, is of the bytes the survey read, through its own open file:
	// a path that names other bytes by then (a swapped symlink) stops the run here.
	if err := sv.SameFile(sum); err != nil {
		return res, err
	}
	if stop, err := r.checkApproval(ctx, &res, sv.Plan()); stop || err != nil {
		return res, err
	}
	sv.DropPlanText()
	return r.pay(ctx, log, res, sv)
}

// pay records the surveyed file's run, and pays its rows unless the file is rejected as a whole:
// a second pass records each chunk (new payouts READY, in one transaction) and hands it to the
// workers, which send each payout only after the ledger holds its intent.
func (r *Runner) pay(ctx context.Context, log *slog.Logger, res Result, sv *intake.Survey) (Result, error) {
	db := r.cfg.Ledger
	if err := runs.CloseInterrupted(ctx, db, r.cfg.Files, res.StartedAt); err != nil {
		return res, err
	}
	run := ledger.Run{ID: res.RunID, Kind: ledger.KindRun, File: res.File, FileSHA256: res.SHA256, StartedAt: res.StartedAt,
		Status: ledger.RunRunning, Source: intake.Source(res.SHA256, sv.Sheet()), Rows: sv.Rows(), Columns: sv.Header()}
	if err := runs.Open(ctx, db, run); err != nil {
		return res, err
	}
	sameRuns, err := db.FindRuns(ctx, ledger.RunFilter{Source: run.Source})
	if err != nil {
		return res, err
	}
	sameAs := make(map[string]bool, len(sameRuns))
	for _, s := range sameRuns {
		sameAs[s.ID] = true
	}
	pay := sv.Rejected() == 0 || r.cfg.AllowPartial
	rcfg := intake.RecordConfig{Ledger: db, Log: log, Survey: sv, Run: run, Pay: pay, SameAs: sameAs,
		AllowPaidElsewhere: r.cfg.AllowPaidElsewhere, Now: r.cfg.Now, Zone: r.cfg.Zone}
	var aborted error
	var rc *intake.Recorder
	if !pay {
		// A file rejected as a whole records its lines and no payout.
		rc = intake.NewRecorder(rcfg)
		if err := rc.Record(ctx); err != nil {
			return res, err
		}
	} else if rc, res.Stuck, aborted, err = r.recordAndSend(ctx, log, rcfg, sv.ToPay()); err != nil {
		return res, err
	}
	rc.WarnPaidElsewhere(ctx)
	res.SkippedOtherFile = rc.SkippedOtherFile()
	res, err = r.finish(context.WithoutCancel(ctx), res, aborted, pay)
	if err != nil {
		return res, err
	}
	log.Info("reports written", "reports", res.Reports)
	log.Info("run finished", "exit", res.ExitCode, "succeeded", res.Succeeded, "pending", res.Pending,
		"failed", res.Failed, "unknown", res.Unknown, "rejected", res.Rejected, "skipped", res.Skipped)
	return res, nil
}

// recordAndSend runs the recording pass beside the pool that pays what it records. A pass that
// cannot go on (the ledger, a file changed under it) stops the pool, and so does the pool's end
// stop the pass. The error is for what stops the run before its report (the ledger); the
// aborted error says why the pool stopped before every row was dealt with.
func (r *Runner) recordAndSend(ctx context.Context, log *slog.Logger, rcfg intake.RecordConfig, total int) (*intake.Recorder, []lookup.Stuck, error, error) {
	sub, done, err := send.Start(context.WithoutCancel(ctx), r.cfg.sender(), log, rcfg.Run.ID)
	if err != nil {
		return nil, nil, nil, err
	}
	defer done()
	feed := make(chan send.Feed)
	rcfg.Hand = func(ctx context.Context, payouts []ledger.Payout) error {
		tasks, done := sub.Take(payouts, r.cfg.Now())
		select {
		case feed <- send.Feed{Tasks: tasks, Done: done}:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	rc := intake.NewRecorder(rcfg)
	r.logSending(log, total)
	passCtx, stopPass := context.WithCancelCause(ctx)
	passErr := make(chan error, 1)
	go func() {
		defer close(feed)
		err := rc.Record(passCtx)
		if err != nil && passCtx.Err() == nil {
			select {
			case feed <- send.Feed{Err: err}:
			case <-passCtx.Done():
			}
		}
		passErr <- err
	}()
	stuck, aborted := sub.Pay(ctx, feed, total)
	stopPass(errPoolStopped)
	err = <-passErr
	switch {
	case err == nil, errors.Is(err, errPoolStopped), ctx.Err() != nil:
		return rc, stuck, aborted, nil
	case errors.Is(err, intake.ErrFileChanged):
		return rc, stuck, fmt.Errorf("%w: %w", pool.ErrAborted, err), nil
	}
	return rc, stuck, aborted, err
}

// errPoolStopped ends a recording pass whose pool has stopped.
var errPoolStopped = errors.New("the run stopped sending")

// intake is how the run reads, validates and checks the file at path, against providers.
func (r *Runner) intake(path string, providers []api.Provider) intake.Options {
	vopts := r.cfg.Validate
	vopts.Providers = providers
	return intake.Options{Path: path, Read: r.cfg.Read, Validate: vopts, Ledger: r.cfg.Ledger, ChunkRows: r.cfg.ChunkRows,
		Repeats: r.cfg.Repeats, Now: r.cfg.Now, Zone: r.cfg.Zone}
}

// providers fetches the provider list, retrying what is safe to retry.
func (r *Runner) providers(ctx context.Context) ([]api.Provider, error) {
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		if err := r.cfg.Limiter.Wait(ctx); err != nil {
			return nil, err
		}
		list, err := r.cfg.Service.ListProviders(ctx)
		if err == nil {
			if len(list) == 0 {
				return nil, errors.New("the service listed no payout providers")
			}
			return list, nil
		}
		lastErr = err
		switch api.KindOf(err) {
		case api.KindRetryable, api.KindRateLimited:
			if err := pool.Sleep(ctx, r.cfg.Clock, r.cfg.backoff().RetryWait(err, attempt)); err != nil {
				return nil, err
			}
		default:
			return nil, err
		}
	}
	return nil, lastErr
}
