package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/journal"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/pool"
	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/signature"
	"github.com/payout/payout/ledger"
)

// runOptions are the flags of `run`, shared by `watch` and `demo`.
type runOptions struct {
	logOptions
	dryRun          bool
	providers       string // plan, approve, reject: a saved provider list instead of the service
	allowPartial    bool
	allowPaidElse   bool
	reportDir       string
	ledger          string
	rate            rateFlag
	burst           countFlag
	workers         countFlag
	jsonOut         bool
	sheet           string
	numericAccounts bool
	hiddenRows      bool
	maxRows         int
	maxAmount       string
	maxTotal        string
	description     string
	unknownGrace    time.Duration
	inFlightHold    time.Duration
	noResendUnknown bool
	timeout         time.Duration
	metricsFile     string
	metrics         *metricsWriter // set by a command that rewrites the metrics file as it ends
	ledgerWait      *time.Duration // --ledger-wait; nil: $PAYOUT_LEDGER_WAIT or its default
	progress        bool
	alwaysSummary   bool // print the summary even on success (the demo is for people)
	approval        approvalOptions
	repeats         repeatOptions
}

func (o *runOptions) register(fs *flag.FlagSet) {
	o.logOptions.register(fs)
	fs.BoolVar(&o.allowPartial, "allow-partial", false, "pay the valid rows of a file that has rejected rows (default: all or nothing)")
	fs.BoolVar(&o.allowPaidElse, "allow-paid-elsewhere", false, "rows that a run of another file already paid are expected: report them, but exit 0 for them (default: exit 4)")
	fs.StringVar(&o.reportDir, "report-dir", defaultReportDir, "folder for the reports")
	addLedgerFlag(fs, &o.ledger)
	o.registerLimits(fs)
	o.registerLedgerWait(fs)
	fs.StringVar(&o.sheet, "sheet", "", "XLSX sheet to read, hidden or not (default: the active sheet, the one shown when the workbook was saved)")
	fs.BoolVar(&o.numericAccounts, "numeric-accounts", false, "my account numbers have no leading zeros: accept XLSX account cells stored as numbers")
	fs.BoolVar(&o.hiddenRows, "hidden-rows", false, "pay XLSX rows hidden in the workbook (default: reject them)")
	fs.IntVar(&o.maxRows, "max-rows", batch.DefaultMaxRows, "most data rows a file may have")
	fs.StringVar(&o.maxAmount, "max-amount", "", "largest amount of one row in MYR (default: no limit)")
	fs.StringVar(&o.maxTotal, "max-total", "", "largest total of one file in MYR (default: no limit)")
	fs.StringVar(&o.description, "description", "", "payment_description for rows that have none")
	fs.DurationVar(&o.unknownGrace, "unknown-grace", batch.DefaultUnknownGrace, "how long a payout whose outcome is unknown must be reported not found before it is sent again")
	fs.DurationVar(&o.inFlightHold, "in-flight-hold", batch.DefaultInFlightHold, "on a PostgreSQL ledger, the least time a payout whose outcome is unknown is only looked up before it is sent again: a host taken for gone may still be sending")
	fs.BoolVar(&o.noResendUnknown, "no-resend-unknown", false, "never send again a payout whose outcome is unknown: leave it for reconciliation")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "time limit of one request to the service")
	fs.StringVar(&o.metricsFile, "metrics-file", "", "after each file, and as the command ends whatever its exit code, replace this file with Prometheus metrics in the text format, for node_exporter's textfile collector:\n"+
		"the run's rows by state, amount, exit code, duration and last success; the ledger's payouts and MYR by state")
	fs.BoolVar(&o.progress, "progress", true, "draw a progress bar when stderr is a terminal (not with -v: the log lines go there)")
	o.approval.register(fs)
	o.repeats.register(fs)
}

func runCmd(ctx context.Context, e *env, args []string) (err error) {
	var o runOptions
	fs := newFlagSet(e, "run", "run [flags] FILE...")
	o.register(fs)
	fs.BoolVar(&o.dryRun, "dry-run", false, "read and validate only: nothing is sent and nothing is written to the ledger")
	fs.BoolVar(&o.jsonOut, "json", false, "print one JSON object per file on stdout, failures included")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	defer o.metricsAtEnd(e, &err)()
	if fs.NArg() == 0 {
		fs.Usage()
		return usageError("run: name at least one file")
	}
	files := fs.Args()
	if problems := checkInputs(files); len(problems) > 0 {
		return o.refuseFiles(e, files, problems)
	}
	mode := modePay
	if o.dryRun {
		mode = modeDryRun
	}
	s, err := newSession(ctx, e, &o, mode)
	if err != nil {
		o.printNotRun(e, files, err, exitCodeOf(err))
		return err
	}
	defer s.close()
	ctx, stop := s.guard(ctx)
	defer stop()
	worst := exitOK
	for i, path := range files {
		res, err := s.runner.Run(ctx, path)
		if err != nil {
			err = s.runError(path, err)
			o.printFailed(e, res, err, exitCodeOf(err))
			o.printNotRun(e, files[i+1:], fmt.Errorf("not run: the run stopped at %s", path), exitCodeOf(err))
			return err
		}
		if err := s.print(res); err != nil {
			return err
		}
		worst = exitcode.Worse(worst, res.ExitCode)
		if res.ExitCode == exitAborted {
			o.printNotRun(e, files[i+1:], fmt.Errorf("not run: the run stopped at %s", path), exitAborted)
			break
		}
	}
	if worst != exitOK {
		return &exitError{code: worst}
	}
	return nil
}

// refuseFiles stops a run whose inputs are not all readable files, before anything is done.
func (o *runOptions) refuseFiles(e *env, files []string, problems map[string]error) error {
	var msgs []string
	for _, path := range files {
		if err, bad := problems[path]; bad {
			msgs = append(msgs, err.Error())
			o.printFailed(e, batch.Result{File: path}, err, exitUsage)
		} else {
			o.printFailed(e, batch.Result{File: path}, errors.New("not run: another file named was refused"), exitUsage)
		}
	}
	return usageError("%s (nothing was done)", strings.Join(msgs, "; "))
}

// failedResult is what --json prints for a file without a finished run: the summary's fields,
// zero where unknown, with why and the exit code. A time not known (the run never started or
// never ended) is left out rather than printed as year 1.
type failedResult struct {
	batch.Result
	StartedAt time.Time `json:"started_at,omitzero"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	Error     string    `json:"error"`
}

// printFailed prints, with --json, one file's failure. res holds what is known of the run.
func (o *runOptions) printFailed(e *env, res batch.Result, err error, code int) {
	if !o.jsonOut {
		return
	}
	res.ExitCode, res.DryRun = code, o.dryRun
	if res.Reports == nil {
		res.Reports = []string{}
	}
	_ = json.NewEncoder(e.stdout).Encode(failedResult{Result: res, StartedAt: res.StartedAt, EndedAt: res.EndedAt, Error: err.Error()})
}

func (o *runOptions) printNotRun(e *env, files []string, err error, code int) {
	for _, path := range files {
		o.printFailed(e, batch.Result{File: path}, err, code)
	}
}

// exitCodeOf is the exit code an error returned by a command ends the process with.
func exitCodeOf(err error) int {
	var exit *exitError
	if errors.As(err, &exit) {
		return exit.code
	}
	return exitAborted
}

// session is what a command that pays needs: config, client, ledger (locked), runner.
type session struct {
	e       *env
	o       *runOptions
	cfg     config
	log     *slog.Logger
	client  *api.Client
	db      *ledger.DB
	lock    ledger.Hold
	runner  *batch.Runner
	metrics *metricsWriter
	bar     *progressBar   // nil unless stderr is a terminal
	logOut  *logOutput     // the logger's stderr, above the bar once there is one
	key     *signature.Key // $PAYOUT_SIGNING_KEY: signs the chain head each run's reports print
	limiter pool.Limiter   // newLimiter's: on a PostgreSQL ledger, the merchant's, shared
	// limiterDB is the shared limiter's handle on the ledger's database, if it has one.
	limiterDB io.Closer
}

// sessionMode says what a session will do, and so what it needs.
type sessionMode int

const (
	modePay       sessionMode = iota // run, watch, demo: the service, the payout settings, the ledger locked
	modeDryRun                       // run --dry-run: the service; an existing ledger read, never written
	modeReconcile                    // reconcile: the service and an existing ledger, locked
)

func newSession(ctx context.Context, e *env, o *runOptions, mode sessionMode) (*session, error) {
	logOut := &logOutput{w: e.stderr}
	logEnv := *e
	logEnv.stderr = logOut
	log, err := o.logger(&logEnv)
	if err != nil {
		return nil, err
	}
	cfg, err := o.config(e.getenv, mode)
	if err != nil {
		return nil, err
	}
	vopts := read.ValidateOptions{DefaultDescription: o.description, MaxRows: o.maxRows}
	if vopts.MaxAmount, err = optionalAmount("--max-amount", o.maxAmount); err != nil {
		return nil, err
	}
	if vopts.MaxTotal, err = optionalAmount("--max-total", o.maxTotal); err != nil {
		return nil, err
	}
	var client *api.Client
	var saved savedProviders
	if o.providers != "" {
		if saved, err = loadSavedProviders(o.providers); err != nil {
			return nil, err
		}
	} else if client, err = api.NewClient(api.Config{BaseURL: cfg.BaseURL, AuthToken: cfg.AuthToken, Timeout: o.timeout, MaxConns: maxConns(cfg.Workers)}); err != nil {
		return nil, configError(apiConfigError(err))
	}
	// Before the ledger is locked and anything is sent: reports that cannot be written after the
	// payouts went out would fail every rerun too. A command that writes none has no folder.
	if o.reportDir != "" {
		if err := checkReportDir(o.reportDir); err != nil {
			return nil, err
		}
	}
	approval, err := o.approval.policy(e.getenv)
	if err != nil {
		return nil, err
	}
	repeats, err := o.repeats.policy()
	if err != nil {
		return nil, usageError("%v", err)
	}
	s := &session{e: e, o: o, cfg: cfg, log: log, logOut: logOut, client: client}
	if mode == modeDryRun {
		err = s.openLedgerToCheck(ctx)
	} else {
		err = s.openLedger(ctx)
	}
	if err != nil {
		return nil, err
	}
	if s.metrics = o.metrics; s.metrics == nil && o.metricsFile != "" {
		s.metrics = newMetricsWriter(o.metricsFile, time.Now)
	}
	if err := s.openLimiter(); err != nil {
		return nil, err
	}
	rcfg := s.runnerConfig(mode, vopts)
	rcfg.Approval, rcfg.Repeats = approval, repeats
	if mode == modePay {
		if err := s.signHeads(ctx, &rcfg); err != nil {
			s.close()
			return nil, err
		}
	}
	if saved != nil {
		rcfg.Service = saved
	}
	s.runner = batch.NewRunner(rcfg)
	return s, nil
}

// openLedgerToCheck opens the ledger a dry run checks references against, if there is one: a dry
// run writes nothing and needs no ledger. A ledger named (--ledger, $PAYOUT_LEDGER) must be
// there: a mistyped name would otherwise check against nothing and pass rows that the ledger
// holds as paid.
func (s *session) openLedgerToCheck(ctx context.Context) error {
	err := ledger.Probe(s.cfg.Ledger)
	if errors.Is(err, ledger.ErrNoLedger) {
		if s.o.ledger != "" || s.e.getenv(envLedger) != "" {
			return ledgerError(err)
		}
		return nil
	}
	if s.db, err = ledger.Open(ctx, s.cfg.Ledger, stamped(ledger.Options{Logger: s.log})); err != nil {
		return ledgerError(err)
	}
	return nil
}

// signHeads loads $PAYOUT_SIGNING_KEY, if set, for the runner to sign the chain head each run's
// reports print; a key that cannot be used is a configuration error before anything is paid.
func (s *session) signHeads(ctx context.Context, rcfg *batch.Config) error {
	var err error
	if s.key, err = signature.SigningKeyFromEnv(ctx, s.e.getenv); err != nil {
		return configError(&ConfigError{Field: signature.EnvSigningKey, Value: s.e.getenv(signature.EnvSigningKey), Err: err})
	}
	if key := s.key; key != nil {
		rcfg.SignHead = func(ctx context.Context, statement []byte) ([]byte, error) {
			return signature.Sign(ctx, bytes.NewReader(statement), signature.NamespacePack, key)
		}
	}
	return nil
}

func (s *session) runnerConfig(mode sessionMode, vopts read.ValidateOptions) batch.Config {
	o, cfg := s.o, s.cfg
	rcfg := batch.Config{
		Ledger: s.db, Service: s.client, Logger: s.log,
		Limiter: s.limiter, Workers: cfg.Workers,
		VirtualPoolRef: cfg.VirtualPoolRef, CallbackURL: cfg.CallbackURL, RedirectURL: cfg.RedirectURL,
		DryRun: mode == modeDryRun, AllowPartial: o.allowPartial, AllowPaidElsewhere: o.allowPaidElse, ReportDir: o.reportDir,
		Read: read.Options{Sheet: o.sheet, MaxRows: o.maxRows, NumericAccounts: o.numericAccounts, HiddenRows: o.hiddenRows}, Validate: vopts,
		UnknownGrace: o.unknownGrace, NoResendUnknown: o.noResendUnknown, ChunkRows: cfg.ChunkRows,
		Zone: o.zone,
	}
	if s.lock != nil {
		// The payouts this process sends name it; holding the lock, it knows every other
		// process that named itself in a payout is gone.
		rcfg.Process, rcfg.Liveness, rcfg.Files, rcfg.Fence = s.lock.Self().Claimant(), s.lock, s.lock, s.lock
		if ledger.IsURL(cfg.Ledger) { // PostgreSQL: a ledger several hosts share
			rcfg.InFlightHold = o.inFlightHold
		}
		name := ledger.Redact(cfg.Ledger)
		rcfg.Journal = func(e journal.Entry) error {
			path, err := journal.Path(s.e.getenv)
			if err != nil {
				return err
			}
			e.Ledger = name
			return journal.Append(path, e)
		}
	}
	if testHooks != nil {
		testHooks(&rcfg)
	}
	// With -v the log lines are many, and the bar would be drawn again under each of them.
	if o.progress && !o.verbose && isTerminal(s.e.stderr) && mode != modeDryRun {
		s.bar = newProgressBar(s.e.stderr, s.o.zone)
		s.logOut.bar.Store(s.bar)
		rcfg.Progress, rcfg.Waiting = s.bar.update, s.bar.waiting
	}
	return rcfg
}

// config is the environment's configuration with the flags given on top, checked for what mode
// needs; every missing setting is named at once.
func (o *runOptions) config(getenv func(string) string, mode sessionMode) (config, error) {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return cfg, configError(err)
	}
	if o.ledger != "" {
		cfg.Ledger = o.ledger
	}
	if o.rate.set {
		cfg.Rate = o.rate.value
	}
	if o.workers.set {
		cfg.Workers = o.workers.value
	}
	if o.ledgerWait != nil {
		cfg.LedgerWait = *o.ledgerWait
	}
	switch {
	case mode == modePay:
		err = cfg.validateSubmit()
	case mode == modeDryRun && o.providers != "":
		// A plan computed from a saved provider list calls no service.
	default:
		err = cfg.validateService()
	}
	return cfg, configError(err)
}

// openLedger takes the ledger's lock, then opens the existing ledger and checks it. A second
// process gets exit 1, naming the holder; a missing, empty, foreign or damaged ledger exit 2.
func (s *session) openLedger(ctx context.Context) error {
	// Before the lock, which would leave a lock file beside a ledger that is not there.
	if err := ledger.Probe(s.cfg.Ledger); err != nil {
		return ledgerError(err)
	}
	lock, err := ledger.TakeWithin(ctx, s.cfg.Ledger, s.cfg.LedgerWait, func(holder string) {
		if isTerminal(s.e.stderr) && !s.o.verbose {
			// A person would otherwise see nothing for minutes; cron, off a terminal, is not told.
			fmt.Fprintf(s.e.stderr, "payout: the ledger is in use by another process (%s): waiting up to %s for it (Ctrl-C stops)\n",
				holder, strings.TrimSuffix(s.cfg.LedgerWait.String(), "0s"))
		}
		s.log.Info("the ledger is in use by another process: waiting for it", "holder", holder, "at_most", s.cfg.LedgerWait.String())
	})
	var refused *ledger.OpenError
	if errors.As(err, &refused) {
		return ledgerError(err) // a database without the ledger: as status and Open say it
	}
	if err != nil {
		return &exitError{code: exitAborted, err: err}
	}
	db, err := ledger.Open(ctx, s.cfg.Ledger, stamped(ledger.Options{Logger: s.log, Verify: true}))
	if err != nil {
		_ = lock.Close()
		return ledgerError(err)
	}
	s.db, s.lock = db, lock
	return nil
}

func (s *session) close() {
	if s.db != nil {
		// Once the database is gone, and the command has said so, its connections' ends are no news.
		if err := s.db.Close(); err != nil && !ledger.ClosedConnection(err) && !s.holdIsLost() {
			s.log.Error("close ledger", "err", err)
		}
	}
	if s.lock != nil {
		_ = s.lock.Close()
	}
	if s.limiterDB != nil {
		_ = s.limiterDB.Close()
	}
	_ = s.key.Close()
}

// runError gives a run's error its exit code (exitcode.OfError) and says what to do about it.
func (s *session) runError(path string, err error) error {
	s.bar.end()
	err = explainUnreachable(err, s.cfg.BaseURL)
	switch {
	case exitcode.OfError(err) == exitRejected:
		return &exitError{code: exitRejected, err: fmt.Errorf("%s rejected: %w", path, err)}
	case errors.Is(err, context.Canceled):
		return &exitError{code: exitAborted, err: fmt.Errorf("%s: stopped before anything was sent; run again", path)}
	case errors.Is(err, ledger.ErrLocked):
		return &exitError{code: exitAborted, err: fmt.Errorf("%s: %w", path, err)}
	case s.o.dryRun:
		return &exitError{code: exitAborted, err: fmt.Errorf("%s: %w (dry run: nothing was sent)", path, err)}
	case ledger.Damaged(err):
		return damagedStop("the run of "+path, s.cfg.Ledger, err)
	}
	if api.KindOf(err) == api.KindUnauthorized || errors.Is(err, outcome.ErrUnauthorized) {
		// The token would be refused again: the message already says what to check.
		return &exitError{code: exitAborted, err: fmt.Errorf("%s: %w (nothing is lost: once the token is right, run the same command again)", path, err)}
	}
	return &exitError{code: exitAborted, err: fmt.Errorf("%s: %w (nothing is lost: run again to resume)", path, err)}
}

func optionalAmount(flagName, v string) (decimal.Decimal, error) {
	if v == "" {
		return decimal.Zero, nil
	}
	d, err := read.ParseAmount(v)
	if err != nil {
		return decimal.Zero, usageError("%s %q: %v", flagName, v, err)
	}
	return d, nil
}
