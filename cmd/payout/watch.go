package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/watch"
	"github.com/payout/payout/ledger"
)

// watchCmd is folder mode: files dropped into DIR/inbox are paid one at a time like `run` and moved
// to DIR/done or DIR/failed. It holds the ledger's lock (and the folder's) for its whole life, so
// that no two processes pay at once: with --once, a ledger another process holds is left to the
// next turn (exit 0); without, it is waited for as `run` waits (--ledger-wait). On a PostgreSQL ledger several
// hosts may watch one shared folder: one leads it, the others wait (--once: exit 0) and take
// over when its process ends.
func watchCmd(ctx context.Context, e *env, args []string) (err error) {
	var o runOptions
	fs := newFlagSet(e, "watch", "watch [--once] [--settle D] [--interval D] [run flags] DIR")
	o.register(fs)
	if f := fs.Lookup("report-dir"); f != nil {
		f.Usage, f.DefValue = "folder for the reports (default DIR/reports)", ""
	}
	fs.BoolVar(&o.jsonOut, "json", false, "print each file's summary as one JSON line on stdout")
	once := fs.Bool("once", false, "process what is in the folder, then exit with the worst file's exit code (for cron)")
	settle := fs.Duration("settle", watch.DefaultSettle, "how long a file's size and modification time must stay unchanged before it is claimed")
	interval := fs.Duration("interval", watch.DefaultInterval, "time between looks at the inbox (without --once)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	defer o.metricsAtEnd(e, &err)()
	if fs.NArg() != 1 {
		fs.Usage()
		return usageError("watch: name one folder")
	}
	if *settle < 0 {
		return usageError("--settle %s: want 0 or more", *settle)
	}
	if *interval <= 0 {
		return usageError("--interval %s: want more than 0", *interval)
	}
	dir := fs.Arg(0)
	if info, err := os.Stat(dir); err == nil && !info.IsDir() {
		return usageError("watch: %s is not a folder: name the folder that holds inbox (nothing was done)", dir)
	}
	reportDir := filepath.Join(dir, watch.ReportsDir)
	if flagGiven(fs, "report-dir") {
		reportDir = o.reportDir
	}
	o.reportDir = reportDir // checked by the session before the ledger is locked

	s, err := openWatch(ctx, e, &o, *once)
	if err != nil || s == nil {
		return err
	}
	defer s.close()
	ctx, stop := s.guard(ctx)
	defer stop()
	wcfg := watch.Config{
		Dir: dir, Runner: s.runner, Ledger: s.db, Settle: *settle, Interval: *interval,
		ReportDir: reportDir, Logger: s.log, Done: s.watched,
	}
	if wcfg.Lead, err = leadInbox(s.lock, dir); err != nil {
		return &exitError{code: exitAborted, err: err}
	}
	w, err := watch.New(wcfg)
	if err != nil {
		return &exitError{code: exitAborted, err: err}
	}
	defer w.Close()

	if *once {
		worst, err := w.Once(ctx)
		if stop := damagedStop("folder mode", s.cfg.Ledger, err); stop != nil {
			return stop
		}
		if err != nil || worst != exitOK {
			return &exitError{code: worst, err: err}
		}
		return nil
	}
	s.log.Info("watching", "dir", dir, "interval", interval.String(), "settle", settle.String())
	if err := w.Loop(ctx); err != nil {
		if stop := damagedStop("folder mode", s.cfg.Ledger, err); stop != nil {
			return stop
		}
		return &exitError{code: exitAborted, err: err}
	}
	// A loop stopped by a lost session is a failure (a service manager restarts it), not a signal.
	return holdLost(ctx)
}

// openWatch opens folder mode's session. With once, a ledger another process holds is not
// waited for but left to the next turn, which cron starts in minutes: no session, and no error.
func openWatch(ctx context.Context, e *env, o *runOptions, once bool) (*session, error) {
	if once && o.ledgerWait == nil {
		noWait := time.Duration(0)
		o.ledgerWait = &noWait
	}
	s, err := newSession(ctx, e, o, modePay)
	if once && errors.Is(err, ledger.ErrLocked) {
		if log, logErr := o.logger(e); logErr == nil {
			log.Info("the ledger is in use by another process: the inbox is left to the next turn", "err", err)
		}
		return nil, nil
	}
	return s, err
}

// leadInbox is how a watcher whose ledger is shared by several hosts (PostgreSQL) leads its
// inbox: one watcher at a time, the one holding the lock keyed by the inbox's absolute path (every
// host mounts the shared folder at the same path). nil on SQLite: the ledger's lock already keeps
// every other watcher off.
func leadInbox(hold ledger.Hold, dir string) (func(context.Context) (bool, ledger.Process, error), error) {
	leader, ok := hold.(ledger.Leader)
	if !ok {
		return nil, nil
	}
	inbox, err := filepath.Abs(filepath.Join(dir, watch.InboxDir))
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	return func(ctx context.Context) (bool, ledger.Process, error) { return leader.LeadInbox(ctx, inbox) }, nil
}

// watched prints and records one file's outcome as `run` does for each of its files. A file the
// reader refused has no run; it is shown as a rejected one.
func (s *session) watched(out watch.FileOutcome) {
	res := out.Result
	res.ExitCode = out.Exit
	res.File = out.Path // where the file is now: done, failed or processing
	if out.Err != nil && s.o.jsonOut {
		s.o.printFailed(s.e, res, out.Err, out.Exit)
		return
	}
	if out.Err != nil && out.Exit != exitRejected {
		return // infrastructure: the command returns the error
	}
	if out.Err != nil {
		s.printRefused(res, out)
		return
	}
	if err := s.print(res); err != nil {
		s.log.Error("print summary", "err", err)
	}
}

// printRefused says what became of a file refused as a whole: no row of it was read as a payout,
// so there are no counts to print, only why, the note and its report.
func (s *session) printRefused(res batch.Result, out watch.FileOutcome) {
	s.bar.end()
	if s.metrics != nil {
		if err := s.metrics.file(context.Background(), res, s.db); err != nil {
			s.log.Error("write metrics file", "err", err)
		}
	}
	fmt.Fprintf(s.e.stdout, "REFUSED %s: nothing was recorded or sent\n  %s\n", res.File, out.Err)
	if out.Note != "" {
		fmt.Fprintf(s.e.stdout, "  why: %s\n", out.Note)
	}
	for _, p := range res.Reports {
		fmt.Fprintf(s.e.stdout, "  report: %s\n", p)
	}
}
