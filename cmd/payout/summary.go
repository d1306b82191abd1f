package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/outcome"
)

// print writes a run's summary: JSON with --json; otherwise a few lines when they are wanted.
func (s *session) print(res batch.Result) error {
	s.bar.end()
	if s.metrics != nil {
		// Written also after Ctrl-C: a stopped run is one to see on the dashboards.
		if err := s.metrics.file(context.Background(), res, s.db); err != nil {
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
	unreadable := ""
	if res.UnreadableAmounts > 0 {
		unreadable = fmt.Sprintf(" (and %d row(s) whose amount is not a number)", res.UnreadableAmounts)
	}
	fmt.Fprintf(w, "%s %s of %s: %d rows, MYR %s%s\n", kind, res.RunID, res.File, res.Rows, res.TotalAmount.StringFixed(2), unreadable)
	if res.DryRun {
		fmt.Fprintf(w, "  valid %d, rejected %d (nothing was sent)\n", res.Rows-res.Rejected, res.Rejected)
	} else if res.AwaitingApproval == "" || res.NotProved {
		fmt.Fprintf(w, "  succeeded %d, pending %d, failed %d, unknown %d, not sent %d, rejected %d, skipped (earlier run) %d\n",
			res.Succeeded, res.Pending, res.Failed, res.Unknown, res.NotSent, res.Rejected, res.Skipped)
	}
	if res.SkippedOtherFile > 0 {
		fmt.Fprintf(w, "  %d rows were not sent because ANOTHER file paid them (the report names it): is this last period's file,\n"+
			"    or are its references reused? --allow-paid-elsewhere if this is expected\n", res.SkippedOtherFile)
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
	for _, p := range res.Stuck {
		fmt.Fprintf(w, "  %s: %s\n", p.Ref, outcome.StuckMessage(p.Ref, p.Attempts))
	}
	printAwaiting(w, res)
	if res.Aborted != "" {
		fmt.Fprintf(w, "  stopped: %s: %s\n", res.Aborted, cmp.Or(res.ResumeAdvice, "run the same command again to resume"))
	}
	for _, p := range res.Reports {
		fmt.Fprintf(w, "  report: %s\n", p)
	}
}
