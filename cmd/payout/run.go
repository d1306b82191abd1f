package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/time/rate"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/ledger"
)

// runOptions are the flags of `run`, shared by `watch` and `demo`.
type runOptions struct {
	logOptions
	dryRun          bool
	allowPartial    bool
	reportDir       string
	ledger          string
	rate            float64
	burst           int
	workers         int
	jsonOut         bool
	sheet           string
	numericAccounts bool
	hiddenRows      bool
	maxRows         int
	maxAmount       string
	maxTotal        string
	description     string
	unknownGrace    time.Duration
	noResendUnknown bool
	timeout         time.Duration
	metricsFile     string
	progress        bool
	alwaysSummary   bool // print the summary even on success (the demo is for people)
}

func (o *runOptions) register(fs *flag.FlagSet) {
	o.logOptions.register(fs)
	fs.BoolVar(&o.allowPartial, "allow-partial", false, "pay the valid rows of a file that has rejected rows (default: all or nothing)")
	fs.StringVar(&o.reportDir, "report-dir", defaultReportDir, "folder for the reports")
	fs.StringVar(&o.ledger, "ledger", "", "ledger file (default $"+envLedger+" or "+defaultLedger+")")
	fs.Float64Var(&o.rate, "rate", 0, "requests per second to the service (default $"+envRate+" or 10)")
	fs.IntVar(&o.burst, "burst", 1, "requests allowed at once above the rate")
	fs.IntVar(&o.workers, "workers", 0, "concurrent requests (default $"+envWorkers+" or 4)")
	fs.StringVar(&o.sheet, "sheet", "", "XLSX sheet to read, hidden or not (default: the active sheet, the one shown when the workbook was saved)")
	fs.BoolVar(&o.numericAccounts, "numeric-accounts", false, "my account numbers have no leading zeros: accept XLSX account cells stored as numbers")
	fs.BoolVar(&o.hiddenRows, "hidden-rows", false, "pay XLSX rows hidden in the workbook (default: reject them)")
	fs.IntVar(&o.maxRows, "max-rows", batch.DefaultMaxRows, "most data rows a file may have")
	fs.StringVar(&o.maxAmount, "max-amount", "", "largest amount of one row in MYR (default: no limit)")
	fs.StringVar(&o.maxTotal, "max-total", "", "largest total of one file in MYR (default: no limit)")
	fs.StringVar(&o.description, "description", "", "payment_description for rows that have none")
	fs.DurationVar(&o.unknownGrace, "unknown-grace", batch.DefaultUnknownGrace, "how long a payout whose outcome is unknown must be reported not found before it is sent again")
	fs.BoolVar(&o.noResendUnknown, "no-resend-unknown", false, "never send again a payout whose outcome is unknown: leave it for reconciliation")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "time limit of one request to the service")
	fs.StringVar(&o.metricsFile, "metrics-file", "", "write Prometheus metrics here at the end (node_exporter textfile collector)")
	fs.BoolVar(&o.progress, "progress", true, "draw a progress bar when stderr is a terminal")
}

func runCmd(ctx context.Context, e *env, args []string) error {
	var o runOptions
	fs := newFlagSet(e, "run", "run [flags] FILE...")
	o.register(fs)
	fs.BoolVar(&o.dryRun, "dry-run", false, "read and validate only: nothing is sent and nothing is written to the ledger")
	fs.BoolVar(&o.jsonOut, "json", false, "print the summary as JSON on stdout")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return usageError("run: name at least one file")
	}
	mode := modePay
	if o.dryRun {
		mode = modeDryRun
	}
	s, err := newSession(ctx, e, &o, mode)
	if err != nil {
		return err
	}
	defer s.close()
	worst := exitOK
	for _, path := range fs.Args() {
		res, err := s.runner.Run(ctx, path)
		if err != nil {
			return s.runError(path, err)
		}
		if err := s.print(res); err != nil {
			return err
		}
		worst = batch.WorseExit(worst, res.ExitCode)
		if res.ExitCode == exitAborted {
			break
		}
	}
	if worst != exitOK {
		return &exitError{code: worst}
	}
	return nil
}

// session is what a command that pays needs: config, client, ledger (locked), runner.
type session struct {
	e       *env
	o       *runOptions
	cfg     config
	log     *slog.Logger
	client  *api.Client
	db      *ledger.DB
	lock    *ledger.FileLock
	runner  *batch.Runner
	metrics *metricsWriter
}

// sessionMode says what a session will do, and so what it needs.
type sessionMode int

const (
	modePay       sessionMode = iota // run, watch, demo: the service, the payout settings, the ledger locked
	modeDryRun                       // run --dry-run: the service; an existing ledger read, never written
	modeReconcile                    // reconcile: the service and an existing ledger, locked
)

func newSession(ctx context.Context, e *env, o *runOptions, mode sessionMode) (*session, error) {
	log, err := o.logger(e.stderr)
	if err != nil {
		return nil, err
	}
	cfg, err := loadConfig(e.getenv)
	if err != nil {
		return nil, configError(err)
	}
	if o.ledger != "" {
		cfg.Ledger = o.ledger
	}
	if o.rate > 0 {
		cfg.Rate = o.rate
	}
	if o.workers > 0 {
		cfg.Workers = o.workers
	}
	if o.burst < 1 {
		return nil, usageError("--burst %d: want 1 or more", o.burst)
	}
	if mode == modePay {
		err = cfg.validateSubmit()
	} else {
		err = cfg.validateService()
	}
	if err != nil {
		return nil, configError(err)
	}
	vopts := batch.ValidateOptions{DefaultDescription: o.description, MaxRows: o.maxRows}
	if vopts.MaxAmount, err = optionalAmount("--max-amount", o.maxAmount); err != nil {
		return nil, err
	}
	if vopts.MaxTotal, err = optionalAmount("--max-total", o.maxTotal); err != nil {
		return nil, err
	}
	client, err := api.NewClient(api.Config{BaseURL: cfg.BaseURL, AuthToken: cfg.AuthToken, Timeout: o.timeout, MaxConns: cfg.Workers})
	if err != nil {
		return nil, configError(err)
	}
	s := &session{e: e, o: o, cfg: cfg, log: log, client: client}
	switch mode {
	case modeDryRun:
		// A dry run writes nothing; it still checks references against an existing ledger.
		if fileExists(cfg.Ledger) {
			if s.db, err = ledger.Open(ctx, cfg.Ledger, ledger.Options{Logger: log}); err != nil {
				return nil, &exitError{code: exitAborted, err: fmt.Errorf("open ledger: %w", err)}
			}
		}
	case modeReconcile:
		// Reconciling a ledger that does not exist would create an empty one and report all is well.
		if !fileExists(cfg.Ledger) {
			return nil, usageError("no ledger at %s: set --ledger or $%s", cfg.Ledger, envLedger)
		}
		fallthrough
	default:
		if err := s.openLedger(ctx); err != nil {
			return nil, err
		}
	}
	if o.metricsFile != "" {
		s.metrics = &metricsWriter{path: o.metricsFile}
	}
	rcfg := batch.Config{
		Ledger: s.db, Service: client, Logger: log,
		Limiter: rate.NewLimiter(rate.Limit(cfg.Rate), o.burst), Workers: cfg.Workers,
		VirtualPoolRef: cfg.VirtualPoolRef, CallbackURL: cfg.CallbackURL, RedirectURL: cfg.RedirectURL,
		DryRun: mode == modeDryRun, AllowPartial: o.allowPartial, ReportDir: o.reportDir,
		Read: batch.ReadOptions{Sheet: o.sheet, MaxRows: o.maxRows, NumericAccounts: o.numericAccounts, HiddenRows: o.hiddenRows}, Validate: vopts,
		UnknownGrace: o.unknownGrace, NoResendUnknown: o.noResendUnknown,
	}
	if o.progress && isTerminal(e.stderr) && mode != modeDryRun {
		rcfg.Progress = newProgressBar(e.stderr).update
	}
	s.runner = batch.NewRunner(rcfg)
	return s, nil
}

// openLedger takes the ledger's lock, then opens it. A second process gets exit 1, naming the holder.
func (s *session) openLedger(ctx context.Context) error {
	lock, err := ledger.Lock(s.cfg.Ledger)
	if err != nil {
		return &exitError{code: exitAborted, err: err}
	}
	db, err := ledger.Open(ctx, s.cfg.Ledger, ledger.Options{Logger: s.log})
	if err != nil {
		_ = lock.Unlock()
		return &exitError{code: exitAborted, err: fmt.Errorf("open ledger: %w", err)}
	}
	s.db, s.lock = db, lock
	return nil
}

func (s *session) close() {
	if s.db != nil {
		if err := s.db.Close(); err != nil {
			s.log.Error("close ledger", "err", err)
		}
	}
	if s.lock != nil {
		_ = s.lock.Unlock()
	}
}

// runError maps a run's infrastructure error to an exit code: a file the reader refused is the
// input's fault (3); anything else stopped the run (1).
func (s *session) runError(path string, err error) error {
	var fileErr *batch.FileError
	var rowErr *batch.RowError
	var inputErr *batch.InputError
	switch {
	case errors.As(err, &fileErr), errors.As(err, &rowErr), errors.As(err, &inputErr):
		return &exitError{code: exitRejected, err: fmt.Errorf("%s rejected: %w", path, err)}
	case errors.Is(err, context.Canceled):
		return &exitError{code: exitAborted, err: fmt.Errorf("%s: stopped before anything was sent; run again", path)}
	}
	return &exitError{code: exitAborted, err: fmt.Errorf("%s: %w (nothing is lost: run again to resume)", path, err)}
}

// print writes a run's summary: JSON with --json; otherwise a few lines when they are wanted.
func (s *session) print(res batch.Result) error {
	if s.metrics != nil {
		if err := s.metrics.write(res, s.db); err != nil {
			s.log.Error("write metrics file", "err", err)
		}
	}
	if s.o.jsonOut {
		enc := json.NewEncoder(s.e.stdout)
		return enc.Encode(res)
	}
	if res.ExitCode == exitOK && !s.o.verbose && !s.o.alwaysSummary && !isTerminal(s.e.stdout) {
		return nil
	}
	printSummary(s.e.stdout, res)
	return nil
}

func printSummary(w io.Writer, res batch.Result) {
	kind := "run"
	if res.DryRun {
		kind = "dry run"
	}
	fmt.Fprintf(w, "%s %s of %s: %d rows, MYR %s\n", kind, res.RunID, res.File, res.Rows, res.TotalAmount.StringFixed(2))
	if res.DryRun {
		fmt.Fprintf(w, "  valid %d, rejected %d (nothing was sent)\n", res.Rows-res.Rejected, res.Rejected)
	} else {
		fmt.Fprintf(w, "  succeeded %d, pending %d, failed %d, unknown %d, not sent %d, rejected %d, skipped (earlier run) %d\n",
			res.Succeeded, res.Pending, res.Failed, res.Unknown, res.NotSent, res.Rejected, res.Skipped)
	}
	if len(res.Problems) > 0 {
		fmt.Fprintln(w, "  rejected rows (fix them in the file, then run it again):")
		for _, p := range res.Problems {
			fmt.Fprintf(w, "    line %d, %s %q: %s\n", p.Line, p.Column, p.Value, p.Reason)
		}
		if res.Rejected > len(res.Problems) {
			fmt.Fprintf(w, "    ... the reports list them all\n")
		}
	}
	if len(res.Warnings) > 0 {
		fmt.Fprintln(w, "  rows paid as read, check them:")
		for _, p := range res.Warnings {
			fmt.Fprintf(w, "    line %d, %s %q: %s\n", p.Line, p.Column, p.Value, p.Reason)
		}
	}
	if res.Aborted != "" {
		fmt.Fprintf(w, "  stopped: %s: run the same command again to resume\n", res.Aborted)
	}
	for _, p := range res.Reports {
		fmt.Fprintf(w, "  report: %s\n", p)
	}
}

func optionalAmount(flagName, v string) (decimal.Decimal, error) {
	if v == "" {
		return decimal.Zero, nil
	}
	d, err := batch.ParseAmount(v)
	if err != nil {
		return decimal.Zero, usageError("%s %q: %v", flagName, v, err)
	}
	return d, nil
}
