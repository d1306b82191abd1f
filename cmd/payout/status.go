package main

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/words"
	"github.com/payout/payout/ledger"
)

func statusCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "status", "status [--ledger FILE] [--tz NAME] [REF]")
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
	if fs.NArg() > 1 {
		return usageError("status: name at most one external_invoice_ref")
	}
	db, err := openLedgerReadOnly(ctx, e, *ledgerPath)
	if err != nil {
		return err
	}
	defer db.Close()
	if fs.NArg() == 1 {
		return showPayout(ctx, e, db, fs.Arg(0), zone)
	}
	return showLedger(ctx, e, db, zone)
}

var statusOrder = []ledger.State{ledger.Succeeded, ledger.Submitted, ledger.Submitting, ledger.Unknown,
	ledger.Ready, ledger.Failed, ledger.Rejected}

// ledgerCounts is the ledger's payouts and MYR by state as `status` and the metrics show them:
// rows rejected by validation are never payouts, and are counted as REJECTED from the runs' rows
// (rejectedRows: those alone).
func ledgerCounts(ctx context.Context, db *ledger.DB) (counts map[ledger.State]ledger.CountAmount, rejectedRows ledger.CountAmount, err error) {
	totals, err := db.Counts(ctx, ledger.CountRead{RejectedRows: true})
	if err != nil {
		return nil, rejectedRows, err
	}
	counts, rejectedRows = totals.States, totals.RejectedRows
	c := counts[ledger.Rejected]
	counts[ledger.Rejected] = ledger.CountAmount{Count: c.Count + rejectedRows.Count, Amount: c.Amount.Add(rejectedRows.Amount)}
	return counts, rejectedRows, nil
}

func showLedger(ctx context.Context, e *env, db *ledger.DB, zone *time.Location) error {
	counts, rejected, err := ledgerCounts(ctx, db)
	if err != nil {
		return &exitError{code: exitAborted, err: err}
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "STATE\tPAYOUTS\tMYR\t")
	total, n := decimal.Zero, 0
	for _, s := range statusOrder {
		c := counts[s]
		fmt.Fprintf(tw, "%s\t%d\t%s\t\n", s, c.Count, c.Amount.StringFixed(2))
		total, n = total.Add(c.Amount), n+c.Count
	}
	fmt.Fprintf(tw, "total\t%d\t%s\t\n", n, total.StringFixed(2))
	if err := tw.Flush(); err != nil {
		return err
	}
	runs, err := db.FindRuns(ctx, ledger.RunFilter{Latest: 10})
	if err != nil {
		return &exitError{code: exitAborted, err: err}
	}
	if len(runs) > 0 {
		fmt.Fprintf(e.stdout, "\nlatest runs (times in %s):\n", words.ZoneText(zone, runs[0].StartedAt))
		tw = tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "RUN\tKIND\tSTATUS\tEXIT\tSTARTED\tFILE")
		for i := len(runs) - 1; i >= 0; i-- {
			r := runs[i]
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", r.ID, r.Kind, r.Status, r.ExitCode, humanTime(r.StartedAt, zone), r.File)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if err := showAwaiting(ctx, e, db, zone); err != nil {
		return &exitError{code: exitAborted, err: err}
	}
	if rejected.Count > 0 {
		fmt.Fprintf(e.stdout, "\nREJECTED counts %d input rows that validation refused and that were never paid (once per reference).\n", rejected.Count)
	}
	if attention := counts[ledger.Unknown].Count + counts[ledger.Submitting].Count; attention > 0 {
		fmt.Fprintf(e.stdout, "\n%d payouts have an unknown outcome: run `payout reconcile`.\n", attention)
	}
	if err := showNameMismatches(ctx, e.stdout, db); err != nil {
		return &exitError{code: exitAborted, err: err}
	}
	return nil
}

func showPayout(ctx context.Context, e *env, db *ledger.DB, ref string, zone *time.Location) error {
	p, err := db.Get(ctx, ref)
	if errors.Is(err, ledger.ErrNotFound) {
		// A run records its file's payouts before it sends any: only a row of a file rejected as a
		// whole is in a run's report without a payout.
		return usageError("status: %q is not in the ledger: no run recorded it, and nothing was ever sent for it (a row of a file rejected as a whole is only in that run's report)", ref)
	}
	if err != nil {
		return &exitError{code: exitAborted, err: err}
	}
	names, err := db.NameChecks(ctx, ledger.NameFilter{Refs: []string{ref}})
	if err != nil {
		return &exitError{code: exitAborted, err: err}
	}
	var name ledger.NameCheck // none until a callback names the account's holder
	if len(names) > 0 {
		name = names[0]
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	for _, f := range withNameCheck([][2]string{
		{"external_invoice_ref", p.Ref}, {"state", string(p.State)}, {"amount (MYR)", p.Amount.StringFixed(2)},
		{"recipient", p.Recipient}, {"bank", fmt.Sprintf("%s (%d)", p.Bank, p.ProviderID)},
		{"account", outcome.MaskAccount(p.Account)}, {"payout_invoice_no", p.InvoiceNo},
		{"transaction_status", p.TransactionStatus}, {"bank_reference_no", p.BankReferenceNo},
		{"attempts", fmt.Sprint(p.Attempts)}, {"first run", fmt.Sprintf("%s line %d", p.RunID, p.Line)},
		{"last error", p.LastError},
	}, name) {
		fmt.Fprintf(tw, "%s:\t%s\n", f[0], f[1])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if outcome.Stuck(p) {
		fmt.Fprintf(e.stdout, "\n%s\n", outcome.StuckMessage(p.Ref, p.Attempts))
	}
	events, err := db.Events(ctx, ref)
	if err != nil {
		return &exitError{code: exitAborted, err: err}
	}
	fmt.Fprintf(e.stdout, "\nhistory (times in %s):\n", words.ZoneText(zone, p.CreatedAt))
	tw = tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	for _, ev := range events {
		from := string(ev.From)
		if from == "" {
			from = "-"
		}
		fmt.Fprintf(tw, "%s\t%s -> %s\t%s\t%s\t%s\n", humanTime(ev.At, zone), from, ev.To, ev.RunID, ev.Actor, ev.Detail)
	}
	return tw.Flush()
}
