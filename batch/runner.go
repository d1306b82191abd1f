package batch

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/time/rate"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/read"
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
	DefaultWorkers          = 4
	DefaultRate             = 10
	DefaultUnknownGrace     = 2 * time.Minute
	DefaultNotFoundLookups  = 3
	DefaultBreakerThreshold = 10
	DefaultMaxLookupErrors  = 8
	DefaultBackoffBase      = 200 * time.Millisecond
	DefaultBackoffMax       = 30 * time.Second
	// DefaultMaxRows bounds a file: far above any payroll, low enough that a wrong file (a whole
	// export, say) is refused before it fills memory.
	DefaultMaxRows = 200_000
)

// ErrAborted is returned (wrapped) when a run stopped before every row was dealt with: a signal,
// the circuit breaker, a refused auth token. Everything done so far is in the ledger; a rerun resumes.
var ErrAborted = errors.New("run aborted")

// Config holds what a Runner needs. Ledger, Service and a pool reference are required to submit.
type Config struct {
	Ledger  *ledger.DB
	Service Service
	Logger  *slog.Logger
	Now     func() time.Time
	Limiter *rate.Limiter

	Workers        int
	VirtualPoolRef string
	CallbackURL    string
	RedirectURL    string

	DryRun       bool
	AllowPartial bool
	ReportDir    string
	// AllowPaidElsewhere accepts rows skipped because a run of another file paid them: they are
	// still reported, but do not make the exit code 4.
	AllowPaidElsewhere bool

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
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.Limiter == nil {
		cfg.Limiter = rate.NewLimiter(rate.Limit(DefaultRate), 1)
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
	return &Runner{cfg: cfg}
}

// Config is the runner's configuration, with its defaults filled in.
func (r *Runner) Config() Config { return r.cfg }

// WithReportDir returns a Runner like r that writes its reports to dir.
func (r *Runner) WithReportDir(dir string) *Runner {
	cfg := r.cfg
	cfg.ReportDir = dir
	return &Runner{cfg: cfg, reportName: r.reportName}
}

// WithReportName returns a Runner like r that names its reports after name, not the file's own.
func (r *Runner) WithReportName(name string) *Runner {
	return &Runner{cfg: r.cfg, reportName: name}
}

// Result is the outcome of one run, and what `--json` prints of it. Rows = Rejected + Succeeded
// + Pending + Failed + Unknown + NotSent; Skipped counts rows (among Succeeded and Pending) that were
// accepted by the service in an earlier run.
type Result struct {
	RunID       string          `json:"run_id"`
	File        string          `json:"file"`
	SHA256      string          `json:"sha256"`
	DryRun      bool            `json:"dry_run"`
	Rows        int             `json:"rows"`
	Rejected    int             `json:"rejected"`
	Submitted   int             `json:"submitted"`
	Succeeded   int             `json:"succeeded"`
	Pending     int             `json:"pending"`
	Failed      int             `json:"failed"`
	Unknown     int             `json:"unknown"`
	NotSent     int             `json:"not_sent"`
	Skipped     int             `json:"skipped"`
	TotalAmount decimal.Decimal `json:"total_amount"`
	Reports     []string        `json:"reports"`
	ExitCode    int             `json:"exit_code"`
	Aborted     string          `json:"aborted,omitempty"`
	StartedAt   time.Time       `json:"started_at"`
	EndedAt     time.Time       `json:"ended_at"`

	// Stuck lists the rows this run found stuck: sent MaxSendAttempts times with no answer and not
	// found by a lookup. No run sends them again; see StuckMessage.
	Stuck []StuckPayout `json:"stuck,omitempty"`
	// SkippedOtherFile counts the skipped rows that a run of another file paid (see sameInput).
	SkippedOtherFile int `json:"skipped_other_file"`
	// Problems lists the first MaxProblems rejections, in file order; the reports have them all.
	Problems []Problem `json:"problems,omitempty"`
	// Warnings lists the first MaxProblems valid rows that deserve a look (an XLSX account stored
	// as a number); they are paid as read.
	Warnings []Problem `json:"warnings,omitempty"`
}

// MaxProblems bounds Result.Problems, so that a wrong file does not flood a terminal or a log.
const MaxProblems = 50

// Problem is one rejection as a person fixes it: where, what, why.
type Problem struct {
	Line   int    `json:"line"`
	Column string `json:"column"`
	Value  string `json:"value"`
	Reason string `json:"reason"`
}

// Run validates, records, submits and reports one file. The returned error is non-nil only for
// infrastructure failures (ledger, unreadable file, service unreachable at start); rejections and
// failures of rows are in the Result and its ExitCode.
func (r *Runner) Run(ctx context.Context, path string) (Result, error) {
	cfg := r.cfg
	started := cfg.Now()
	res := Result{RunID: NewRunID(started), File: path, DryRun: cfg.DryRun, StartedAt: started}
	log := cfg.Logger.With("run", res.RunID, "file", filepath.Base(path))

	sum, err := FileSHA256(path)
	if err != nil {
		return res, err
	}
	res.SHA256 = sum

	providers, err := r.providers(ctx)
	if err != nil {
		// The service's errors name their call ("list providers: ..."); the others do not.
		if api.KindOf(err) == api.KindNone {
			err = fmt.Errorf("list providers: %w", err)
		}
		return res, ExplainAuth(err)
	}
	vopts := cfg.Validate
	vopts.Providers = providers

	parsed, err := readAndValidate(path, cfg.Read, vopts)
	if err != nil {
		return res, err
	}
	if cfg.Ledger != nil {
		if err := parsed.checkLedger(ctx, cfg.Ledger); err != nil {
			return res, err
		}
	}
	log.Info("file validated", "rows", len(parsed.rows), "rejected", parsed.rejectedCount())
	res.Problems = parsed.problems(MaxProblems)
	res.Warnings = parsed.warnings(MaxProblems)
	for _, w := range res.Warnings {
		log.Warn("row paid as read, check it", "line", w.Line, "column", w.Column, "warning", w.Reason)
	}

	if cfg.DryRun {
		return r.finishDryRun(res, started, parsed)
	}
	if cfg.Ledger == nil {
		return res, errors.New("no ledger: a payout is never sent without one")
	}
	db := cfg.Ledger
	if err := closeInterruptedRuns(ctx, db, started); err != nil {
		return res, err
	}
	run := ledger.Run{ID: res.RunID, Kind: "run", File: path, FileSHA256: sum, StartedAt: started, Status: "running"}
	if err := db.AddRun(ctx, run); err != nil {
		return res, err
	}
	submitAllowed := parsed.rejectedCount() == 0 || cfg.AllowPartial
	// Every line of the file, and every payout new to the ledger (READY), is recorded in one
	// transaction before anything is sent. A file rejected as a whole records no payout.
	lines := parsed.runRows(submitAllowed)
	if res.SkippedOtherFile, err = r.notePaidElsewhere(ctx, log, lines, parsed.existing, path, sum); err != nil {
		return res, err
	}
	var fresh []ledger.Payout
	if submitAllowed {
		fresh = parsed.freshPayouts(res.RunID)
	}
	if err := db.Record(ctx, res.RunID, lines, fresh); err != nil {
		return res, err
	}

	var aborted error
	if submitAllowed {
		res.Stuck, aborted = r.submit(ctx, log, res.RunID, parsed.refsToPay())
	}
	res, err = r.finish(context.WithoutCancel(ctx), res, aborted, submitAllowed)
	if err != nil {
		return res, err
	}
	log.Info("run finished", "exit", res.ExitCode, "succeeded", res.Succeeded, "pending", res.Pending,
		"failed", res.Failed, "unknown", res.Unknown, "rejected", res.Rejected, "skipped", res.Skipped)
	return res, nil
}

// closeInterruptedRuns marks runs still "running" as interrupted: this process holds the ledger's
// lock, so whoever ran them is gone. Their rows are resumed by the row states, not by the run.
func closeInterruptedRuns(ctx context.Context, db *ledger.DB, now time.Time) error {
	runs, err := db.RunsWithStatus(ctx, "running")
	if err != nil {
		return err
	}
	for _, run := range runs {
		if err := db.FinishRun(ctx, run.ID, "interrupted", ExitAborted, now); err != nil {
			return err
		}
	}
	return nil
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
			if err := Sleep(ctx, r.retryWait(err, attempt)); err != nil {
				return nil, err
			}
		default:
			return nil, err
		}
	}
	return nil, lastErr
}

func (r *Runner) retryWait(err error, attempt int) time.Duration {
	return r.backoffs().retryWait(err, attempt)
}

func (r *Runner) graceRule() graceRule {
	return graceRule{grace: r.cfg.UnknownGrace, lookups: r.cfg.NotFoundLookups, noResend: r.cfg.NoResendUnknown}
}

func (r *Runner) backoffs() backoffs {
	return backoffs{base: r.cfg.BackoffBase, max: r.cfg.BackoffMax}
}

func joinMessages(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// NewRunID makes a sortable, readable run id such as 20261122T082500Z-3f9a.
func NewRunID(t time.Time) string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return t.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// FileSHA256 is the hex SHA-256 of the file at path: a run records it to know the same file again.
func FileSHA256(path string) (string, error) {
	// A FIFO would block the open itself and a device would never end: only a regular file is
	// opened, and what was opened is checked again, in case the name was swapped in between.
	before, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("open input: %w", err)
	}
	if !before.Mode().IsRegular() {
		return "", &read.InputError{Path: path, Err: read.ErrNotRegular}
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("open input: %w", err)
	}
	defer f.Close()
	if opened, err := f.Stat(); err != nil {
		return "", fmt.Errorf("open input: %w", err)
	} else if !opened.Mode().IsRegular() {
		return "", &read.InputError{Path: path, Err: read.ErrNotRegular}
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read input: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// MaskAccount keeps an account number's last four digits, for logs and messages.
func MaskAccount(account string) string {
	if len(account) <= 4 {
		return "****"
	}
	return "****" + account[len(account)-4:]
}

// backoff is exponential with full jitter: it spreads retries of many workers apart.
func backoff(base, max time.Duration, attempt int) time.Duration {
	d := base
	for i := 0; i < attempt && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	return d/2 + mrand.N(d/2+1)
}

// Sleep waits for d, or less when ctx ends first, and then returns ctx's error.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
