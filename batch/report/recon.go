package report

import (
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch/words"
)

// ReconRow is one payout as the ledger has it against what the service says.
type ReconRow struct {
	Ref          string
	Line         int
	RunID        string
	Recipient    string
	Account      string
	LedgerState  string
	LedgerAmount decimal.Decimal
	// LedgerAmountText is the file's amount of a rejected row when it is no number; LedgerAmount
	// is zero then, and the row is counted apart from the totals.
	LedgerAmountText string
	ServiceStatus    string           // transaction_status, empty when the service does not know it
	ServiceAmount    *decimal.Decimal // nil when the service did not say
	ServiceAccount   string
	InvoiceNo        string
	Mismatches       []string
	Message          string
	NameAtBank       string // the name the bank holds for the account, from the callback
	NameCheck        string // "", words.NameMatch or words.NameMismatch: never a reason to change a state
}

// ReconSummary heads a reconciliation report. Rows, ByState (by ledger state), Total, Mismatches
// and NotFinal are filled by SummarizeReconciliation.
type ReconSummary struct {
	ID      string
	Started time.Time
	Ended   time.Time
	Scope   string // what was reconciled, e.g. "run 20261122-..." or "since 2026-11-01"
	Rows    int
	ByState []StateTotal
	Total   decimal.Decimal // every row's amount as read, whatever its state (see Summary.Total)
	// Unreadable counts the rows whose amount is no number, and UnreadableLines the first of
	// their lines: counted apart from Total.
	Unreadable      int
	UnreadableLines []int
	Mismatches      int    // rows with at least one mismatch
	NotFinal        int    // rows whose ledger state is not SUCCEEDED, FAILED or REJECTED
	ChainHead       string // the ledger's audit chain head ("EVENT_ID:SHA256") when the report was written
	// NameMismatches counts rows whose bank holds another name for the account than the recipient.
	NameMismatches int
	// Zone is the operator's time zone: every time the reports show people is in it (UTC when
	// nil), and their headers name it.
	Zone *time.Location
}

// SummarizeReconciliation returns meta with its counts and totals computed from rows.
func SummarizeReconciliation(meta ReconSummary, rows []ReconRow) ReconSummary {
	var t reconTally
	for _, r := range rows {
		t.add(r)
	}
	return t.summary(meta)
}

// reconTally adds up a reconciliation's rows as they come.
type reconTally struct {
	t                                    tally
	mismatches, notFinal, nameMismatches int
}

func (rt *reconTally) add(r ReconRow) {
	rt.t.add(Row{Line: r.Line, State: r.LedgerState, Amount: r.LedgerAmount, AmountText: r.LedgerAmountText}, false)
	if r.NameCheck == words.NameMismatch {
		rt.nameMismatches++
	}
	if len(r.Mismatches) > 0 {
		rt.mismatches++
	}
	if !final(r.LedgerState) {
		rt.notFinal++
	}
}

// summary is meta with the counts and totals of the rows added.
func (rt *reconTally) summary(meta ReconSummary) ReconSummary {
	s := rt.t.summary(Summary{})
	meta.Rows, meta.ByState, meta.Total = s.Rows, s.ByState, s.Total
	meta.Unreadable, meta.UnreadableLines = s.Unreadable, s.UnreadableLines
	meta.Mismatches, meta.NotFinal, meta.NameMismatches = rt.mismatches, rt.notFinal, rt.nameMismatches
	return meta
}

// TiesOut reports whether the amounts by state add up to the total, and their sum.
func (s ReconSummary) TiesOut() (decimal.Decimal, bool) {
	sum := sumStates(s.ByState)
	return sum, sum.Equal(s.Total)
}

// UnreadableText says which rows' amounts are no number; empty when every amount reads.
func (s ReconSummary) UnreadableText() string {
	return unreadableText(s.Unreadable, s.UnreadableLines)
}

func final(state string) bool {
	return state == StateSucceeded || state == StateFailed || state == StateRejected
}

// ReconHeader is the header of a reconciliation CSV, the names machines read.
var ReconHeader = []string{"external_invoice_ref", "line", "run_id", "recipient_reference", "third_party_account_no",
	"ledger_state", "ledger_amount", "service_status", "service_amount", "service_account", "payout_invoice_no",
	"mismatches", "message", "name_at_bank", "name_check"}

// ReconSheetHeader is the header of a reconciliation's XLSX sheet "Rows": the columns that print
// first, under headings people read, then the others.
var ReconSheetHeader = reconTable().titles()

// WriteReconciliation writes `reconcile.<id>.csv`, `.xlsx` and `.html` into dir, atomically, like
// WriteRun. Mismatches are joined with "; " in the CSV and XLSX.
func WriteReconciliation(dir string, s ReconSummary, rows []ReconRow) (Paths, error) {
	p, _, err := WriteReconciliationStream(dir, s.ID, func(add func(ReconRow)) (ReconSummary, error) {
		for _, r := range rows {
			add(r)
		}
		return s, nil
	})
	return p, err
}

// WriteReconciliationStream writes the reports of the reconciliation id, as WriteReconciliation
// does, from rows that each passes to add one at a time, in report order; each returns the
// summary's head (times, scope, chain head) once every row is in, and the counts and totals are
// computed from the rows. Only a bounded number of rows is held at any time: the CSV and the XLSX
// are written as rows arrive (the XLSX lists at most XLSXListLimit rows, and beyond that only
// those that need attention), and the HTML page keeps the rows it shows (see HTMLRowLimit). It
// returns the summary written.
func WriteReconciliationStream(dir, id string, each func(add func(ReconRow)) (ReconSummary, error)) (Paths, ReconSummary, error) {
	if err := checkName(id); err != nil {
		return Paths{}, ReconSummary{}, err
	}
	stem := filepath.Join(dir, "reconcile."+id)
	p := Paths{CSV: stem + ".csv", XLSX: stem + ".xlsx", HTML: stem + ".html"}
	var summary ReconSummary // set before the writers see the rows end, read by them after
	writers := []rowWriter[ReconRow]{
		{"csv", p.CSV, func(w io.Writer, rows <-chan []ReconRow) error {
			return writeCSVRows(w, reconTable(), reconCells, rows)
		}},
		{"xlsx", p.XLSX, func(w io.Writer, rows <-chan []ReconRow) error {
			return writeListXLSX(w, reconTable(), rows, listing[ReconRow]{
				cells:     reconCells,
				attention: func(r ReconRow) bool { return reconRank(r) < reconRankSucceeded },
				summary:   func() [][]cell { return reconSummaryCells(summary) },
				csvName:   "CSV report",
			})
		}},
		{"html", p.HTML, func(w io.Writer, rows <-chan []ReconRow) error {
			var kept reconKept
			for batch := range rows {
				for _, r := range batch {
					kept.add(r)
				}
			}
			return kept.render(w, summary)
		}},
	}
	var t reconTally
	err := streamRows(dir, p, false, writers, func(add func(ReconRow)) error {
		meta, err := each(func(r ReconRow) {
			t.add(r)
			add(r)
		})
		summary = meta
		return err
	}, func() { summary = t.summary(summary) })
	if err != nil {
		return Paths{}, summary, err
	}
	return p, summary, nil
}

func reconTable() table {
	// On paper, what a reconciliation is read for: each payout's state and amount on both sides,
	// the account, what differs, and the name at the bank; the service's account (a mismatch
	// names it), the name check, run, line and invoice number follow on screen, beyond the
	// printed columns.
	return table{header: ReconHeader, printed: 10, sheet: []column{
		{"Reference", 19, 0}, {"Recipient", 17, 3}, {"Account", 17, 4}, {"Ledger state", 11, 5},
		{"Ledger amount (MYR)", 12, 6}, {"Service status", 9, 7}, {"Service amount (MYR)", 12, 8},
		{"Mismatches", 13, 11}, {"Message", 16, 12}, {"Name at the bank", 14, 13},
		{"Service account", 16, 9}, {"Name check", 10, 14}, {"Line", 6, 1}, {"Run", 30, 2}, {"Invoice no.", 20, 10},
	}}
}

// reconCells is a reconciliation's report row as cells, in ReconHeader's order, in buf reused.
func reconCells(r ReconRow, buf []cell) []cell {
	svc := cell{kind: kindAmount}
	if r.ServiceAmount != nil {
		svc = amount(*r.ServiceAmount)
	}
	ledgerAmount := amount(r.LedgerAmount)
	if r.LedgerAmountText != "" {
		ledgerAmount = text(r.LedgerAmountText)
	}
	return append(buf[:0], code(r.Ref), integer(r.Line), code(r.RunID), text(r.Recipient), code(r.Account),
		text(r.LedgerState), ledgerAmount, text(r.ServiceStatus), svc, code(r.ServiceAccount),
		code(r.InvoiceNo), text(strings.Join(r.Mismatches, "; ")), text(r.Message), text(r.NameAtBank), text(r.NameCheck))
}

func reconSummaryCells(s ReconSummary) [][]cell {
	rows := [][]cell{
		{text("Reconciliation"), code(s.ID)},
		{text("Scope"), text(s.Scope)},
		{text("Audit chain head"), code(s.ChainHead)},
		{text("Time zone"), text(words.ZoneText(s.Zone, s.Started))},
		{text("Started"), text(words.FormatTime(s.Started, s.Zone))},
		{text("Ended"), text(words.FormatTime(s.Ended, s.Zone))},
		{text("Payouts"), integer(s.Rows)},
		{text("With mismatches"), integer(s.Mismatches)},
		{text("Not final"), integer(s.NotFinal)},
		{text("Name mismatches"), integer(s.NameMismatches)},
		{},
		{text("Ledger state"), text("Payouts"), text("Amount (MYR)")},
	}
	for _, t := range s.ByState {
		rows = append(rows, []cell{text(t.State), integer(t.Count), amount(t.Amount)})
	}
	rows = append(rows, []cell{text("Total"), integer(s.Rows), amount(s.Total)})
	sum, ok := s.TiesOut()
	rows = append(rows, tieOutCells(s.Total, sum, ok, s.UnreadableText())...)
	rows = append(rows, []cell{})
	g := groupRecon(s.ByState)
	return append(rows,
		[]cell{text("Succeeded"), integer(g.succeeded.Count), amount(g.succeeded.Amount)},
		[]cell{text("Failed"), integer(g.failed.Count), amount(g.failed.Amount)},
		[]cell{text("Pending (not final)"), integer(g.pending.Count), amount(g.pending.Amount)},
		[]cell{text("Rejected"), integer(g.rejected.Count), amount(g.rejected.Amount)})
}

// reconGroups is the auditors' tie-out: total = succeeded + failed + pending + rejected.
type reconGroups struct{ succeeded, failed, pending, rejected StateTotal }

func groupRecon(totals []StateTotal) reconGroups {
	g := reconGroups{}
	for _, p := range []*StateTotal{&g.succeeded, &g.failed, &g.pending, &g.rejected} {
		p.Amount = decimal.Zero
	}
	for _, t := range totals {
		var p *StateTotal
		switch t.State {
		case StateSucceeded:
			p = &g.succeeded
		case StateFailed:
			p = &g.failed
		case StateRejected:
			p = &g.rejected
		default:
			p = &g.pending
		}
		p.Count += t.Count
		p.Amount = p.Amount.Add(t.Amount)
	}
	return g
}

type reconRowView struct {
	Ref, Line, RunID, Recipient, Account, LedgerState, Class, LedgerAmount string
	ServiceStatus, ServiceAmount, ServiceAccount, InvoiceNo, Message       string
	NameAtBank                                                             string
	Mismatches                                                             []string
	Attention, NameMismatch                                                bool
}

type groupView struct {
	Name, Amount string
	Count        int
}

type reconPage struct {
	Head      headView
	Summary   summaryView
	Groups    []groupView
	GroupSum  string
	Rows      []reconRowView
	Attention int
	// OmittedAttention and Omitted count the payouts listed first, and the others, that the page
	// does not show for their number.
	OmittedAttention int
	Omitted          int
	// NameMismatches counts the payouts whose bank holds another name than the recipient.
	NameMismatches int
}

// reconRank puts mismatches (a name included) first, then what is not final, then failures,
// then successes (reconRankSucceeded), which need no attention.
func reconRank(r ReconRow) int {
	switch {
	case len(r.Mismatches) > 0 || r.NameCheck == words.NameMismatch:
		return 0
	case !final(r.LedgerState):
		return 1
	case r.LedgerState != StateSucceeded:
		return 2
	}
	return reconRankSucceeded
}

const reconRankSucceeded = 3
