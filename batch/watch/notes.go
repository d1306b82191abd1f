package watch

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/repeats"
	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/batch/retry"
	"github.com/payout/payout/batch/runs"
	"github.com/payout/payout/batch/words"
	"github.com/payout/payout/ledger"
)

// duplicateNote says why a file that sent nothing new was not paid twice; empty when it did send.
func duplicateNote(name string, res batch.Result, earlier *ledger.Run, zone *time.Location) string {
	allSkipped := res.Rows > 0 && res.Skipped == res.Rows && res.Submitted == 0
	if earlier == nil && !allSkipped {
		return ""
	}
	var b strings.Builder
	if earlier != nil {
		fmt.Fprintf(&b, "%s is identical (SHA-256 %s) to %s, paid in run %s on %s.\n",
			name, res.SHA256, filepath.Base(earlier.File), earlier.ID, words.FormatTime(earlier.StartedAt, zone))
	} else {
		fmt.Fprintf(&b, "Every row of %s was accepted by the service in earlier runs.\n", name)
	}
	if res.Submitted == 0 {
		fmt.Fprintf(&b, "Nothing was sent: the ledger skipped all %d rows (run %s).\n", res.Skipped, res.RunID)
	} else {
		fmt.Fprintf(&b, "%d rows that earlier runs had not finished were sent in run %s; %d were skipped.\n",
			res.Submitted, res.RunID, res.Skipped)
	}
	b.WriteString("\nIf these are new payments, give every row a new external_invoice_ref and drop the file again.\n")
	writeReports(&b, res.Reports)
	return b.String()
}

// resultNote explains a file that was rejected (3) or needs attention (4), row by row.
func resultNote(name string, res batch.Result, rows []report.Row) string {
	var b strings.Builder
	var listed []report.Row
	held := false // a listed row is held as a possible repeat
	if res.ExitCode == exitcode.Rejected {
		fmt.Fprintf(&b, "%s was NOT paid: %d of its %d rows were rejected, so nothing in it was sent\n", name, res.Rejected, res.Rows)
		b.WriteString("(a file is paid all or nothing).\n\nRejected rows (line, reference: column, reason, value):\n")
		for _, row := range rows {
			if ledger.State(row.State) == ledger.Rejected {
				listed = append(listed, row)
			}
		}
	} else {
		fmt.Fprintf(&b, "%s was processed, but %d of its %d rows need attention: failed %d, outcome unknown %d, not sent %d, rejected %d.\n",
			name, res.Rows-res.Succeeded-res.Pending, res.Rows, res.Failed, res.Unknown, res.NotSent, res.Rejected)
		fmt.Fprintf(&b, "%d rows were accepted by the service (%d of them in earlier runs).\n", res.Succeeded+res.Pending, res.Skipped)
		if res.SkippedOtherFile > 0 {
			fmt.Fprintf(&b, "%d rows were not sent because ANOTHER file paid them: is this last period's file, or are its references reused?\n", res.SkippedOtherFile)
		}
		b.WriteString("\nRows that need attention:\n")
		for _, row := range rows {
			if !ledger.State(row.State).Accepted() || runs.PaidElsewhere(row) {
				listed = append(listed, row)
			}
		}
	}
	for i, row := range listed {
		if i == whyRowsShown {
			fmt.Fprintf(&b, "  ... and %d more: see the report.\n", len(listed)-whyRowsShown)
			break
		}
		msg := repeats.WithoutHint(row.Message)
		held = held || msg != row.Message
		fmt.Fprintf(&b, "  line %d, %s: %s %s\n", row.Line, row.Ref, row.State, msg)
	}
	b.WriteString("\nWhat to do:\n")
	if res.ExitCode == exitcode.Rejected {
		b.WriteString("  Correct the rows above in your copy of the file, keep the other rows as they are, and drop the\n" +
			"  corrected file into the inbox again. Nothing of this file was paid, so every row will be paid once.\n")
		if held {
			b.WriteString("  Rows held as possible repeats need no correction if they are meant: once the others are\n" +
				"  corrected, the file waits in " + AwaitingDir + " for signers to accept them (its note says how).\n")
		}
	} else {
		b.WriteString("  UNKNOWN rows may have been paid: run `payout reconcile` before anything else.\n")
		if runs.FailuresConfirmed(rows) {
			b.WriteString("  FAILED rows were refused by the service and are never sent again under the same reference:\n" +
				"  pay them in a new file with new external_invoice_ref values.\n")
		} else {
			b.WriteString("  FAILED rows without \"" + outcome.RefusalConfirmed + "\" may exist at the service:\n" +
				"  run `payout reconcile` first, and pay again only the rows it leaves FAILED with that note.\n")
		}
		b.WriteString("  Dropping this same file in again is safe: accepted rows are skipped, rows not sent are sent,\n" +
			"  and unknown ones are looked up before anything is sent.\n")
	}
	writeRetryFile(&b, res)
	writeReports(&b, res.Reports)
	return b.String()
}

// changedNote explains a file that a writer changed while it was being paid.
func changedNote(name string, res batch.Result, claimed, now fingerprint, zone *time.Location) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s CHANGED while it was being paid, so it was moved here and not to done.\n", name)
	fmt.Fprintf(&b, "  when claimed: %d bytes, modified %s, SHA-256 %s\n", claimed.size,
		words.FormatTime(claimed.mod, zone), claimed.sha256)
	fmt.Fprintf(&b, "  after the run: %d bytes, modified %s, SHA-256 %s\n\n", now.size,
		words.FormatTime(now.mod, zone), now.sha256)
	if res.ExitCode == exitcode.Rejected {
		fmt.Fprintf(&b, "Run %s sent nothing: %d of the %d rows it read were rejected (a file is paid all or nothing).\n",
			res.RunID, res.Rejected, res.Rows)
	} else {
		fmt.Fprintf(&b, "Run %s paid the %d rows it read when it started: %d accepted by the service (%d of them in earlier\n"+
			"runs), failed %d, outcome unknown %d, not sent %d, rejected %d. The report lists each of those rows.\n",
			res.RunID, res.Rows, res.Succeeded+res.Pending, res.Skipped, res.Failed, res.Unknown, res.NotSent, res.Rejected)
	}
	b.WriteString("Anything written into the file after the run read it was NOT read and NOT paid.\n")
	b.WriteString("\nWhat to do:\n" +
		"  Wait until whatever writes the file has finished, then drop the COMPLETE file into the inbox again\n" +
		"  under the same name. That is safe: every row the service already accepted is skipped by its\n" +
		"  external_invoice_ref, and only the rows not yet paid are sent. (Under another name, the rows this\n" +
		"  run paid count as paid by another file, and the run asks for attention.)\n" +
		"  To stop this happening, have the writer save under a temporary name (.tmp or .part) and rename\n" +
		"  the file when it is done, or raise --settle above the writer's longest pause.\n")
	if res.Unknown > 0 {
		b.WriteString("  Some rows have an unknown outcome: run `payout reconcile` first.\n")
	}
	writeRetryFile(&b, res)
	writeReports(&b, res.Reports)
	return b.String()
}

// unreadableNote explains a file the reader refused as a whole.
func unreadableNote(name string, err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s was NOT paid: it could not be read as a payout file, so nothing in it was sent.\n\n", name)
	var fileErr *read.FileError
	if errors.As(err, &fileErr) && len(fileErr.Errs) > 0 {
		for i, e := range fileErr.Errs {
			if i == whyRowsShown {
				fmt.Fprintf(&b, "  ... and %d more\n", len(fileErr.Errs)-whyRowsShown)
				break
			}
			fmt.Fprintf(&b, "  %s\n", e.Error())
		}
	} else {
		fmt.Fprintf(&b, "  %s\n", err.Error())
	}
	b.WriteString("\nWhat to do:\n  Save it as CSV (UTF-8) or XLSX with a header row: external_invoice_ref, recipient_reference,\n" +
		"  bank or payout_service_id, third_party_account_no, amount, payment_description (`payout template`\n" +
		"  writes an empty one), fix what is named above, and drop it into the inbox again.\n")
	return b.String()
}

func writeReports(b *strings.Builder, reports []string) {
	if len(reports) == 0 {
		return
	}
	b.WriteString("\nReports:\n")
	for _, p := range reports {
		fmt.Fprintf(b, "  %s\n", absolute(p)) // the note is read from anywhere, not from the watcher's folder
	}
}

// writeRetryFile names the run's retry file, when it wrote one, and says how to use it.
func writeRetryFile(b *strings.Builder, res batch.Result) {
	if res.RetryFile == "" {
		return
	}
	fmt.Fprintf(b, "\nRetry file: %s\n", absolute(res.RetryFile))
	b.WriteString("  It holds every row of this run still unpaid, in this file's columns, with a column " + retry.Column + "\n" +
		"  saying why each is there. Correct the rejected rows in it, keep the others as they are, and drop it\n" +
		"  into the inbox: exactly those rows are paid, never a row already paid. Rows whose outcome is unknown\n" +
		"  keep their reference and are looked up before anything is sent; `payout reconcile` first is best.\n")
}
