package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/journal"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/reconcile"
	"github.com/payout/payout/ledger"
)

// reconcileOptions are the flags of `reconcile`: the service and ledger flags of `run`, and a scope.
type reconcileOptions struct {
	runOptions
	runID        string
	since        string
	failedWithin int
}

func reconcileCmd(ctx context.Context, e *env, args []string) error {
	var o reconcileOptions
	fs := newFlagSet(e, "reconcile", "reconcile [--run RUN | --since DATE] [flags]")
	o.logOptions.register(fs)
	fs.StringVar(&o.runID, "run", "", "reconcile the rows of this run's file, final ones included")
	fs.StringVar(&o.since, "since", "", "reconcile the files run and payouts recorded since DATE (YYYY-MM-DD, midnight in the zone of --tz, or RFC 3339), final ones included")
	fs.IntVar(&o.failedWithin, "failed-within", 7, "also look up the payouts whose create the service refused in the last N days (FAILED without an invoice number): a refused payout the service holds becomes its found state; 0: none")
	fs.StringVar(&o.reportDir, "report-dir", defaultReportDir, "folder for the reconciliation report")
	addLedgerFlag(fs, &o.ledger)
	o.registerLimits(fs)
	o.registerLedgerWait(fs)
	fs.BoolVar(&o.jsonOut, "json", false, "print the summary as JSON on stdout")
	fs.DurationVar(&o.unknownGrace, "unknown-grace", batch.DefaultUnknownGrace, "how long a payout whose outcome is unknown must be reported not found before it is made READY for the next run")
	fs.DurationVar(&o.inFlightHold, "in-flight-hold", batch.DefaultInFlightHold, "on a PostgreSQL ledger, the least time a payout whose outcome is unknown is only looked up before it is made READY: a host taken for gone may still be sending")
	fs.BoolVar(&o.noResendUnknown, "no-resend-unknown", false, "keep every payout whose outcome is unknown UNKNOWN, never READY")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "time limit of one request to the service")
	fs.BoolVar(&o.progress, "progress", true, "draw a progress bar when stderr is a terminal (not with -v: the log lines go there)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return usageError("reconcile: unexpected argument %q (use --run RUN)", fs.Arg(0))
	}
	if o.failedWithin < 0 {
		return usageError("--failed-within %d: want a number of days, 0 or more", o.failedWithin)
	}
	opts := reconcile.Options{RunID: strings.TrimSpace(o.runID), ReportDir: o.reportDir,
		FailedWithin: time.Duration(o.failedWithin) * 24 * time.Hour}
	if o.since != "" {
		if opts.RunID != "" {
			return usageError("reconcile: give --run or --since, not both")
		}
		zone, err := o.tz.location(e.getenv)
		if err != nil {
			return err
		}
		since, err := parseSince(o.since, zone)
		if err != nil {
			return err
		}
		opts.Since = since
	}
	s, err := newSession(ctx, e, &o.runOptions, modeReconcile)
	if err != nil {
		return err
	}
	defer s.close()
	ctx, stop := s.guard(ctx)
	defer stop()
	res, err := reconcile.Run(ctx, s.runner.Config(), opts)
	s.bar.end()
	if err != nil {
		switch {
		case errors.Is(err, ledger.ErrNotFound) && opts.RunID != "":
			return usageError("reconcile: %v (see `payout status` for the runs)", err)
		case errors.Is(err, reconcile.ErrScope):
			return usageError("%v", err)
		case ledger.Damaged(err):
			return damagedStop("reconcile", s.cfg.Ledger, err)
		}
		return &exitError{code: exitAborted, err: fmt.Errorf("reconcile: %w", explainUnreachable(err, s.cfg.BaseURL))}
	}
	reportHeldTwice(ctx, s, &res)
	if err := printReconcile(e, &o, res); err != nil {
		return err
	}
	if res.ExitCode != exitOK {
		return &exitError{code: res.ExitCode}
	}
	return nil
}

// parseSince reads a day (midnight in the operator's zone: operators think in their own days) or
// an RFC 3339 time.
func parseSince(v string, zone *time.Location) (time.Time, error) {
	if t, err := time.ParseInLocation(time.DateOnly, v, zone); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	return time.Time{}, usageError("--since %q: want YYYY-MM-DD or an RFC 3339 time", v)
}

// printReconcile writes the summary: JSON with --json; otherwise a few lines, unless all is well
// and nobody is watching (cron mails only trouble).
func printReconcile(e *env, o *reconcileOptions, res reconcile.Result) error {
	if o.jsonOut {
		return json.NewEncoder(e.stdout).Encode(res)
	}
	if res.ExitCode == exitOK && !o.verbose && !isTerminal(e.stdout) {
		return nil
	}
	printReconcileSummary(e.stdout, res)
	return nil
}

func printReconcileSummary(w io.Writer, res reconcile.Result) {
	fmt.Fprintf(w, "reconcile %s of %s: %d payouts, MYR %s, %d looked up, %d changed\n", res.RunID, res.Scope,
		res.Payouts, res.TotalAmount.StringFixed(2), res.LookedUp, res.Changed)
	fmt.Fprintf(w, "  succeeded %d, pending %d, failed %d, unknown %d, not sent %d, rejected %d\n",
		res.Succeeded, res.Pending, res.Failed, res.Unknown, res.NotSent, res.Rejected)
	if res.Mismatches > 0 {
		fmt.Fprintf(w, "  %d payouts need attention for a mismatch (%d not checked): see the report\n", res.Mismatches, res.NotChecked)
	}
	if res.NameMismatches > 0 {
		fmt.Fprintf(w, "  %d payouts went to an account whose bank holds another name than the recipient: see the report's name_check\n", res.NameMismatches)
	}
	if res.ToResend > 0 {
		fmt.Fprintf(w, "  %d payouts were never created: they are READY, and the next run of their file sends them\n", res.ToResend)
	}
	if res.Aborted != "" {
		again := "; run reconcile again"
		if strings.Contains(res.Aborted, "run reconcile again") {
			again = ""
		}
		fmt.Fprintf(w, "  stopped: %s: everything found so far is recorded%s\n", res.Aborted, again)
	}
	for _, p := range res.Reports {
		fmt.Fprintf(w, "  report: %s\n", p)
	}
	for _, p := range res.RetryFiles {
		fmt.Fprintf(w, "  retry file (what is left to pay of a run): %s\n", p)
	}
}

// reportHeldTwice names in res, on stderr and by its exit code the references the service holds
// twice (heldTwice).
func reportHeldTwice(ctx context.Context, s *session, res *reconcile.Result) {
	twice, err := heldTwice(ctx, s, res.RunID)
	if err != nil {
		s.log.Error("read the journal of late sends", "err", err)
	}
	if len(twice) == 0 {
		return
	}
	res.HeldTwice = twice
	res.ExitCode = max(res.ExitCode, exitAttention)
	for _, t := range twice {
		fmt.Fprintf(s.e.stderr, "payout: DUPLICATE at the service: %s\n", t)
	}
}

// heldTwice reads this host's journal of late sends (batch/journal) for the session's ledger and
// names each reference the service holds under an invoice number other than the ledger's; the
// first reconcile that finds one notes it on the payout, for `payout status` and the trail.
func heldTwice(ctx context.Context, s *session, runID string) ([]string, error) {
	path, err := journal.Path(s.e.getenv)
	if err != nil {
		return nil, err
	}
	entries, err := journal.Read(path, ledger.Redact(s.cfg.Ledger))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.InvoiceNo == "" {
			continue // answered with an error: a lookup by reference tells, and reconcile made it
		}
		p, err := s.db.Get(ctx, e.Ref)
		if err != nil {
			return out, err
		}
		if p.InvoiceNo == "" || p.InvoiceNo == e.InvoiceNo {
			continue
		}
		what := fmt.Sprintf("%s is held as invoice %s (the ledger's) and invoice %s (sent late by %s at %s); recall one with the service",
			e.Ref, p.InvoiceNo, e.InvoiceNo, e.SentBy, e.At.UTC().Format(time.RFC3339))
		out = append(out, what)
		if err := noteOnce(ctx, s.db, p, runID, e.InvoiceNo, "DUPLICATE at the service: "+what); err != nil {
			return out, err
		}
	}
	return out, nil
}

// noteOnce notes detail on payout p unless one of its events names invoice already.
func noteOnce(ctx context.Context, db *ledger.DB, p ledger.Payout, runID, invoice, detail string) error {
	events, err := db.Events(ctx, p.Ref)
	if err != nil {
		return err
	}
	for _, ev := range events {
		if strings.Contains(ev.Detail, invoice) {
			return nil
		}
	}
	return db.Apply(ctx, outcome.Note(p, runID, detail))
}
