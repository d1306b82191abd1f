package report

import (
	"cmp"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/templates"
)

// Mismatch texts of ReconRow.Mismatches that `payout reconcile` uses; other texts are shown as
// given.
const (
	MismatchAmount       = "amount differs"
	MismatchAccount      = "account differs"
	MismatchFinalChanged = "final state changed"
	MismatchUnknown      = "unknown to the service"
)

// Values of ReconRow.NameCheck: how the name the bank holds for the account compares with the
// recipient. Empty: not compared.
const (
	NameMatch    = "match"
	NameMismatch = "mismatch"
)

// ReconRow is one payout as the ledger has it against what the service says.
type ReconRow struct {
	Ref            string
	Line           int
	RunID          string
	Recipient      string
	Account        string
	LedgerState    string
	LedgerAmount   decimal.Decimal
	ServiceStatus  string           // transaction_status, empty when the service does not know it
	ServiceAmount  *decimal.Decimal // nil when the service did not say
	ServiceAccount string
	InvoiceNo      string
	Mismatches     []string
	Message        string
	NameAtBank     string // the name the bank holds for the account, from the callback
	NameCheck      string // "", NameMatch or NameMismatch: never a reason to change a state
}

// ReconSummary heads a reconciliation report. Rows, ByState (by ledger state), Total, Mismatches
// and NotFinal are filled by SummarizeReconciliation.
type ReconSummary struct {
	ID         string
	Started    time.Time
	Ended      time.Time
	Scope      string // what was reconciled, e.g. "run 20261122-..." or "since 2026-11-01"
	Rows       int
	ByState    []StateTotal
	Total      decimal.Decimal
	Mismatches int    // rows with at least one mismatch
	NotFinal   int    // rows whose ledger state is not SUCCEEDED, FAILED or REJECTED
	ChainHead  string // the ledger's audit chain head ("EVENT_ID:SHA256") when the report was written
	// NameMismatches counts rows whose bank holds another name for the account than the recipient.
	NameMismatches int
}

// SummarizeReconciliation returns meta with its counts and totals computed from rows; Total is
// the sum of the ByState amounts by construction.
func SummarizeReconciliation(meta ReconSummary, rows []ReconRow) ReconSummary {
	var t tally
	for _, r := range rows {
		t.add(Row{State: r.LedgerState, Amount: r.LedgerAmount}, false)
	}
	s := t.summary(Summary{})
	meta.Rows, meta.ByState, meta.Total = s.Rows, s.ByState, s.Total
	meta.Mismatches, meta.NotFinal, meta.NameMismatches = 0, 0, 0
	for _, r := range rows {
		if r.NameCheck == NameMismatch {
			meta.NameMismatches++
		}
		if len(r.Mismatches) > 0 {
			meta.Mismatches++
		}
		if !final(r.LedgerState) {
			meta.NotFinal++
		}
	}
	return meta
}

func final(state string) bool {
	return state == StateSucceeded || state == StateFailed || state == StateRejected
}

// ReconHeader is the header of a reconciliation CSV and of its XLSX sheet "Rows".
var ReconHeader = []string{"external_invoice_ref", "line", "run_id", "recipient_reference", "third_party_account_no",
	"ledger_state", "ledger_amount", "service_status", "service_amount", "service_account", "payout_invoice_no",
	"mismatches", "message", "name_at_bank", "name_check"}

// WriteReconciliation writes `reconcile.<id>.csv`, `.xlsx` and `.html` into dir, atomically, like
// WriteRun. Mismatches are joined with "; " in the CSV and XLSX.
func WriteReconciliation(dir string, s ReconSummary, rows []ReconRow) (Paths, error) {
	if err := checkName(s.ID); err != nil {
		return Paths{}, err
	}
	s = SummarizeReconciliation(s, rows)
	stem := filepath.Join(dir, "reconcile."+s.ID)
	p := Paths{CSV: stem + ".csv", XLSX: stem + ".xlsx", HTML: stem + ".html"}
	return p, writeAll(dir, p, reconTable(rows), reconSummaryCells(s), func(w io.Writer) error { return renderRecon(w, s, rows) })
}

func reconTable(rows []ReconRow) table {
	return table{
		header: ReconHeader,
		widths: []float64{22, 7, 20, 28, 20, 12, 14, 12, 14, 20, 20, 30, 50, 28, 12},
		n:      len(rows),
		row: func(i int, buf []cell) []cell {
			r := rows[i]
			svc := cell{kind: kindAmount}
			if r.ServiceAmount != nil {
				svc = amount(*r.ServiceAmount)
			}
			return append(buf[:0], code(r.Ref), integer(r.Line), code(r.RunID), text(r.Recipient), code(r.Account),
				text(r.LedgerState), amount(r.LedgerAmount), text(r.ServiceStatus), svc, code(r.ServiceAccount),
				code(r.InvoiceNo), text(strings.Join(r.Mismatches, "; ")), text(r.Message), text(r.NameAtBank), text(r.NameCheck))
		},
	}
}

func reconSummaryCells(s ReconSummary) [][]cell {
	rows := [][]cell{
		{text("Reconciliation"), code(s.ID)},
		{text("Scope"), text(s.Scope)},
		{text("Audit chain head"), code(s.ChainHead)},
		{text("Started"), text(formatTime(s.Started))},
		{text("Ended"), text(formatTime(s.Ended))},
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
	rows = append(rows, []cell{text("Total"), integer(s.Rows), amount(s.Total)}, []cell{})
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
// then successes.
func reconRank(r ReconRow) int {
	switch {
	case len(r.Mismatches) > 0 || r.NameCheck == NameMismatch:
		return 0
	case !final(r.LedgerState):
		return 1
	case r.LedgerState != StateSucceeded:
		return 2
	}
	return 3
}

func renderRecon(w io.Writer, s ReconSummary, rows []ReconRow) error {
	g := groupRecon(s.ByState)
	groupSum := g.succeeded.Amount.Add(g.failed.Amount).Add(g.pending.Amount).Add(g.rejected.Amount)
	page := reconPage{
		Head: headView{Title: "Reconciliation " + s.ID, Kind: "reconciliation", ID: s.ID, Scope: s.Scope, ChainHead: s.ChainHead,
			Started: formatTime(s.Started), Ended: formatTime(s.Ended),
			Duration: formatDuration(s.Started, s.Ended), Rows: s.Rows, Mismatches: s.Mismatches, NotFinal: s.NotFinal},
		Summary: summarize(s.ByState, s.Total, false),
		Groups: []groupView{
			{"succeeded", FormatMYR(g.succeeded.Amount), g.succeeded.Count},
			{"failed", FormatMYR(g.failed.Amount), g.failed.Count},
			{"pending", FormatMYR(g.pending.Amount), g.pending.Count},
			{"rejected", FormatMYR(g.rejected.Amount), g.rejected.Count},
		},
		GroupSum:       FormatMYR(groupSum),
		NameMismatches: s.NameMismatches,
	}
	page.Summary.TiesOut = page.Summary.TiesOut && groupSum.Equal(s.Total)
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ra, rb := rows[a], rows[b]
		return cmp.Or(cmp.Compare(reconRank(ra), reconRank(rb)), strings.Compare(ra.RunID, rb.RunID),
			cmp.Compare(ra.Line, rb.Line), strings.Compare(ra.Ref, rb.Ref))
	})
	shown, others := 0, 0
	for _, i := range order {
		r := rows[i]
		attention := reconRank(r) < 3
		if attention {
			page.Attention++
			if shown >= HTMLRowLimit {
				page.OmittedAttention++
				continue
			}
			shown++
		} else {
			if others >= HTMLRowLimit {
				page.Omitted++
				continue
			}
			others++
		}
		svc := ""
		if r.ServiceAmount != nil {
			svc = FormatMYR(*r.ServiceAmount)
		}
		line := ""
		if r.Line != 0 {
			line = strconv.Itoa(r.Line)
		}
		page.Rows = append(page.Rows, reconRowView{Ref: r.Ref, Line: line, RunID: r.RunID, Recipient: r.Recipient,
			Account: r.Account, LedgerState: r.LedgerState, Class: stateClass(r.LedgerState), LedgerAmount: FormatMYR(r.LedgerAmount),
			ServiceStatus: r.ServiceStatus, ServiceAmount: svc, ServiceAccount: r.ServiceAccount, InvoiceNo: r.InvoiceNo,
			Message: r.Message, Mismatches: r.Mismatches, Attention: attention,
			NameAtBank: r.NameAtBank, NameMismatch: r.NameCheck == NameMismatch})
	}
	return templates.Reconcile().Execute(w, page)
}
