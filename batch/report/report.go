// Package report writes the result reports of a run and the reconciliation reports of
// `payout reconcile`: a CSV (rows only, for machines), an XLSX (sheet "Rows" and sheet "Summary")
// and an HTML page for auditors (summary first, then the rows, those needing attention first).
//
// The types here are the consumer's shape: the runner fills them from the ledger. Every amount is
// a decimal.Decimal; nothing is converted to float64 except the one numeric XLSX cell write, which
// is checked to reproduce the decimal's exact text.
package report

import (
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// The states the reports know by name. They mirror ledger.State; this package does not import
// the ledger so that it can render rows from anywhere.
const (
	StateSucceeded  = "SUCCEEDED"
	StateSubmitted  = "SUBMITTED"
	StateSubmitting = "SUBMITTING"
	StateUnknown    = "UNKNOWN"
	StateReady      = "READY"
	StateFailed     = "FAILED"
	StateRejected   = "REJECTED"
)

// stateOrder is the fixed order of Summary.ByState: done first, then in flight, then the bad news.
var stateOrder = []string{StateSucceeded, StateSubmitted, StateSubmitting, StateUnknown, StateReady, StateFailed, StateRejected}

// Row is one input row with its outcome.
type Row struct {
	Line       int
	Ref        string
	Recipient  string
	ProviderID int64 // 0 when unknown: written as an empty cell
	Bank       string
	Account    string
	Amount     decimal.Decimal
	// AmountText is the raw cell when the amount did not parse; Amount is zero then. When it is
	// not empty it is what the reports show in the amount column, as text.
	AmountText        string
	State             string
	InvoiceNo         string
	TransactionStatus string
	Message           string
}

// StateTotal is the count and sum of the rows in one state.
type StateTotal struct {
	State  string
	Count  int
	Amount decimal.Decimal
}

// Summary heads a run's report. Rows, ByState and Total are filled by Summarize.
type Summary struct {
	RunID      string
	Kind       string
	File       string
	FileSHA256 string
	Started    time.Time
	Ended      time.Time
	Rows       int
	// ByState lists the seven ledger states in a fixed order (SUCCEEDED, SUBMITTED, SUBMITTING,
	// UNKNOWN, READY, FAILED, REJECTED), zeros included, then any other state found, by name.
	ByState []StateTotal
	Total   decimal.Decimal // the sum of every row's Amount; equal to the sum of ByState amounts
	Skipped int             // rows done in an earlier run
	DryRun  bool
	// Aborted is why the run stopped before it had sent every row; empty when it did not stop.
	Aborted string
	// NotSent lists the lines still READY (never sent) of an aborted run, filled by Summarize.
	NotSent []int
	// Regenerated is when the report was written again from the ledger (`payout report`); zero
	// for the report written at the end of the run.
	Regenerated time.Time
	// ChainHead is the ledger's audit chain head ("EVENT_ID:SHA256") when the report was written;
	// empty for a dry run, which records nothing.
	ChainHead string
}

// AbortedText is what the reports of an aborted run say about it.
func (s Summary) AbortedText() string {
	if s.Aborted == "" {
		return ""
	}
	return "ABORTED: " + s.Aborted + " — run the same command again to resume"
}

// notSentShown bounds the lines a summary lists as not sent: the rows table has them all.
const notSentShown = 30

// NotSentText says which rows of an aborted run were not sent; empty when there are none.
func (s Summary) NotSentText() string {
	if s.Aborted == "" || len(s.NotSent) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(strconv.Itoa(len(s.NotSent)))
	b.WriteString(" row(s) were not sent (state READY): line ")
	for i, line := range s.NotSent {
		if i == notSentShown {
			b.WriteString(" and " + strconv.Itoa(len(s.NotSent)-notSentShown) + " more")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(line))
	}
	return b.String()
}

// RegeneratedText says that a report was written again from the ledger, and when.
func (s Summary) RegeneratedText() string {
	if s.Regenerated.IsZero() {
		return ""
	}
	return "Regenerated at " + formatTime(s.Regenerated) + " from the ledger: states are as of that time, not as the run left them"
}

// Summarize returns meta with Rows, ByState and Total computed from rows. Total is the sum of the
// ByState amounts by construction, so the report always ties out.
func Summarize(meta Summary, rows []Row) Summary {
	meta.Rows = len(rows)
	meta.ByState = byState(len(rows), func(i int) (string, decimal.Decimal) { return rows[i].State, rows[i].Amount })
	meta.Total = sumStates(meta.ByState)
	meta.NotSent = nil
	if meta.Aborted != "" {
		for _, r := range rows {
			if r.State == StateReady {
				meta.NotSent = append(meta.NotSent, r.Line)
			}
		}
	}
	return meta
}

// byState groups n rows, read through at, into the fixed state order.
func byState(n int, at func(i int) (string, decimal.Decimal)) []StateTotal {
	totals := make([]StateTotal, len(stateOrder))
	index := make(map[string]int, len(stateOrder))
	for i, s := range stateOrder {
		totals[i] = StateTotal{State: s, Amount: decimal.Zero}
		index[s] = i
	}
	var others []StateTotal
	for i := range n {
		state, amount := at(i)
		j, ok := index[state]
		if !ok {
			others = append(others, StateTotal{State: state, Amount: decimal.Zero})
			j = len(stateOrder) + len(others) - 1
			index[state] = j
		}
		var t *StateTotal
		if j < len(stateOrder) {
			t = &totals[j]
		} else {
			t = &others[j-len(stateOrder)]
		}
		t.Count++
		t.Amount = t.Amount.Add(amount)
	}
	slices.SortFunc(others, func(a, b StateTotal) int { return strings.Compare(a.State, b.State) })
	return append(totals, others...)
}

func sumStates(totals []StateTotal) decimal.Decimal {
	sum := decimal.Zero
	for _, t := range totals {
		sum = sum.Add(t.Amount)
	}
	return sum
}

// Paths are the files one report was written to.
type Paths struct {
	CSV, XLSX, HTML string
}

// List returns the non-empty paths in the order CSV, XLSX, HTML.
func (p Paths) List() []string {
	var list []string
	for _, s := range []string{p.CSV, p.XLSX, p.HTML} {
		if s != "" {
			list = append(list, s)
		}
	}
	return list
}

// Neutralize returns s made safe to put in a spreadsheet cell: text a spreadsheet would run as a
// formula (starting, after any spaces, with =, +, -, @, tab, CR or LF, or their full-width forms)
// gets a leading single quote, which makes a spreadsheet show it as text. Other text is unchanged.
// It is for text fields only: numbers written by this package never pass through it.
func Neutralize(s string) string {
	t := strings.TrimLeft(s, " ")
	if t == "" {
		return s
	}
	r, _ := utf8.DecodeRuneInString(t)
	switch r {
	case '=', '+', '-', '@', '\t', '\r', '\n', '＝', '＋', '－', '＠':
		return "'" + s
	}
	return s
}

// amountString is the plain machine form of an amount: at least two decimals, never rounded (a
// rejected row may carry 1.234, and the report must show what the file said).
func amountString(d decimal.Decimal) string {
	if d.Exponent() >= -2 {
		return d.StringFixed(2)
	}
	return d.String()
}

// rowAmount is what the amount column of a row shows, and whether it is a number.
func rowAmount(r Row) (text string, numeric bool) {
	if r.AmountText != "" {
		return r.AmountText, false
	}
	return amountString(r.Amount), true
}

// FormatMYR formats an amount for people: "RM 1,250.00", thousands separated, at least two
// decimals, never rounded.
func FormatMYR(d decimal.Decimal) string {
	s := amountString(d)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	b.WriteString("RM ")
	b.WriteString(sign)
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	b.WriteByte('.')
	b.WriteString(frac)
	return b.String()
}
