package report

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch/words"
)

// ErrBadName is returned when a run or reconciliation id, or an input name, cannot be part of a
// file name.
var ErrBadName = errors.New("report: name not usable in a file name")

const (
	dirMode  = 0o750
	fileMode = 0o600 // reports carry account numbers: readable by their owner only
)

// RunHeader is the header of a run's result CSV, the names machines read.
var RunHeader = []string{"line", "external_invoice_ref", "recipient_reference", "payout_service_id", "bank",
	"third_party_account_no", "amount", "state", "payout_invoice_no", "transaction_status", "message"}

// RunSheetHeader is the header of a run's XLSX sheet "Rows", the CSV's columns in its order
// under headings people read.
var RunSheetHeader = runTable().titles()

// WriteRun writes a run's three reports into dir (created 0750 if missing):
// `<input base name>.<run id>.result.csv`, `.result.xlsx` and `.report.html`, where the base name
// is inputName without its directory and extension; a report written again from the ledger
// (Summary.Regenerated set) has `.regenerated-<UTC time>` after the run id. Each file is written
// through atomicfile, so a reader never sees half a report, and is readable by its owner only. The summary's totals are recomputed from rows
// (Summarize), so the reports tie out whatever the caller passed.
func WriteRun(dir, inputName string, s Summary, rows []Row) (Paths, error) {
	p, _, err := WriteRunStream(dir, inputName, s, func(add func(Row) error) error {
		for _, r := range rows {
			if err := add(r); err != nil {
				return err
			}
		}
		return nil
	})
	return p, err
}

func checkName(id string) error {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, `/\`+"\x00") {
		return fmt.Errorf("%w: %q", ErrBadName, id)
	}
	return nil
}

func runSummaryCells(s Summary) [][]cell {
	var rows [][]cell
	for _, line := range []string{s.AbortedText(), s.NotSentText(), s.RegeneratedText()} {
		if line != "" {
			rows = append(rows, []cell{text(line)})
		}
	}
	if len(rows) > 0 {
		rows = append(rows, []cell{})
	}
	rows = append(rows, [][]cell{
		{text("Run"), code(s.RunID)},
		{text("Kind"), text(s.KindText())},
		{text("File"), text(s.File)},
		{text("File SHA-256"), code(s.FileSHA256)},
		approvalCells(s),
		{text("Time zone"), text(words.ZoneText(s.Zone, s.Started))},
		{text("Started"), text(words.FormatTime(s.Started, s.Zone))},
		{text("Ended"), text(words.FormatTime(s.Ended, s.Zone))},
		{text("Rows"), integer(s.Rows)},
		{text("Skipped (done in an earlier run)"), integer(s.Skipped)},
		{text("Audit chain head"), code(s.ChainHead)},
		{},
		{text("State"), text("Rows"), text("Amount (MYR)")},
	}...)
	for _, t := range s.ByState {
		rows = append(rows, []cell{text(t.State), integer(t.Count), amount(t.Amount)})
	}
	rows = append(rows, []cell{text("Total"), integer(s.Rows), amount(s.Total)})
	sum, ok := s.TiesOut()
	return append(rows, tieOutCells(s.Total, sum, ok, s.UnreadableText())...)
}

// tieOutCells are the summary's check that the amounts by state add up to the file's total,
// and the rows whose amount is no number, counted apart.
func tieOutCells(total, sum decimal.Decimal, ok bool, unreadable string) [][]cell {
	verdict := "File total " + FormatMYR(total) + " = sum by state " + FormatMYR(sum)
	if !ok {
		verdict = "DOES NOT TIE OUT: file total " + FormatMYR(total) + ", sum by state " + FormatMYR(sum)
	}
	rows := [][]cell{{text("Tie-out"), text(verdict)}}
	if unreadable != "" {
		rows = append(rows, []cell{text("Unreadable amounts"), text(unreadable)})
	}
	return rows
}

// approvalCells is the Summary's line on approval: who approved, or why nobody had to. The label
// "Approved by" is kept for a run that signers approved: an evidence pack's check reads the
// names after it.
func approvalCells(s Summary) []cell {
	switch {
	case s.ApprovedBy != "":
		return []cell{text("Approved by"), text(s.ApprovalText())}
	case s.DryRun:
		return []cell{text("Approval"), text("not checked before a dry run's report: `payout plan FILE` shows what signers sign")}
	default:
		return []cell{text("Approval"), text("no signature was asked for: the ledger's policy needs none, or the run had nothing new to pay")}
	}
}
