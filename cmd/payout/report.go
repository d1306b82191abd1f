package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/runs"
	"github.com/payout/payout/batch/watch"
	"github.com/payout/payout/ledger"
)

func reportCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "report", "report [--report-dir DIR] [--ledger FILE] [--tz NAME] RUN")
	reportDir := fs.String("report-dir", defaultReportDir, "folder for the reports")
	ledgerPath := new(string)
	addLedgerFlag(fs, ledgerPath)
	var tz zoneOption
	tz.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	zone, err := tz.location(e.getenv)
	if err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usageError("report: name one run id (see `payout status`)")
	}
	db, err := openLedgerReadOnly(ctx, e, *ledgerPath)
	if err != nil {
		return err
	}
	defer db.Close()
	run, err := db.GetRun(ctx, fs.Arg(0))
	if errors.Is(err, ledger.ErrNotFound) {
		return usageError("report: no run %q in the ledger (see `payout status`)", fs.Arg(0))
	}
	if err != nil {
		return &exitError{code: exitAborted, err: err}
	}
	// A file of a watched folder is named as the watch named the run's own reports.
	paths, err := runs.WriteReports(ctx, db, run.ID, *reportDir, watch.ReportName(run.File), time.Now(), zone, e.getenv(approval.EnvAllowedSigners))
	if err != nil {
		return &exitError{code: exitAborted, err: err}
	}
	for _, p := range paths.List() {
		fmt.Fprintln(e.stdout, p)
	}
	return nil
}

// openLedgerReadOnly opens an existing ledger without taking the run lock: reads are safe beside
// a running process (WAL). A missing ledger is a usage error, not a new empty file.
func openLedgerReadOnly(ctx context.Context, e *env, path string) (*ledger.DB, error) {
	db, err := ledger.Open(ctx, ledgerPath(e, path), stamped(ledger.Options{}))
	if err != nil {
		return nil, ledgerError(err)
	}
	return db, nil
}
