// Package report writes the result reports of a run and the reconciliation reports of
// `payout reconcile`: a CSV (rows only, for machines), an XLSX (sheet "Rows" and sheet "Summary")
// and an HTML page for auditors (summary first, then the rows, those needing attention first).
//
// The CSV keeps the column names machines read (RunHeader, ReconHeader); the XLSX is for people,
// on screen and on paper: headings in words (RunSheetHeader, ReconSheetHeader), the columns worth
// paper first and alone in the print area (A4 landscape, one page wide, the header row on every
// page), their widths held so that the text prints at 8 pt or more, free text wrapped.
//
// The types here are the consumer's shape: the runner fills them from the ledger. Every amount is
// a decimal.Decimal; nothing is converted to float64 except the one numeric XLSX cell write, which
// is checked to reproduce the decimal's exact text.
package report

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch/words"
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
	// Skipped marks a row the service had accepted in an earlier run: not sent again.
	Skipped bool
	// PaidElsewhere marks a skipped row that a run of another file paid. Not shown: the message says it.
	PaidElsewhere bool
	// RefusalConfirmed marks a FAILED row that a lookup confirmed the service never created. Not
	// shown: the message says it.
	RefusalConfirmed bool
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
	// Total is the file's total: every row's amount as read, whatever its state, summed apart
	// from ByState so that TiesOut can check one against the other.
	Total decimal.Decimal
	// Unreadable counts the rows whose amount is no number (AmountText): they are listed, and
	// counted apart from Total and ByState; UnreadableLines are the first of their lines.
	Unreadable      int
	UnreadableLines []int
	Skipped         int // rows done in an earlier run, counted by Summarize
	// Expected is how many rows the input had, when known; a run that stopped before it recorded
	// them all reports fewer rows than that.
	Expected int
	DryRun   bool
	// Aborted is why the run stopped before it had sent every row; empty when it did not stop.
	// AbortAdvice is what to do about it ("run the same command again to resume" when empty).
	Aborted     string
	AbortAdvice string
	// NotSent lists the first lines still READY (never sent) of an aborted run, and NotSentCount
	// counts them all; both are filled by Summarize.
	NotSent      []int
	NotSentCount int
	// Regenerated is when the report was written again from the ledger (`payout report`); zero
	// for the report written at the end of the run.
	Regenerated time.Time
	// ApprovedBy and ApprovedAt name the signers of the file's plan that the run went ahead on;
	// empty when it needed none.
	ApprovedBy string
	ApprovedAt time.Time
	// ChainHead is the ledger's audit chain head ("EVENT_ID:SHA256") when the report was written;
	// empty for a dry run, which records nothing.
	ChainHead string
	// Zone is the operator's time zone: every time the reports show people is in it (UTC when
	// nil), and their headers name it.
	Zone *time.Location
}

// AbortedText is what the reports of an aborted run say about it.
func (s Summary) AbortedText() string {
	if s.Aborted == "" {
		return ""
	}
	advice := s.AbortAdvice
	if advice == "" {
		advice = "run the same command again to resume"
	}
	return "ABORTED: " + s.Aborted + " — " + advice
}

// notSentShown bounds the lines a summary lists as not sent: the rows table has them all.
const notSentShown = 30

// NotSentText says which rows of an aborted run were not sent; empty when there are none.
func (s Summary) NotSentText() string {
	missing := ""
	if s.Expected > s.Rows {
		missing = strconv.Itoa(s.Expected-s.Rows) + " row(s) of the file are not listed: the run stopped before it recorded them, and none of them was sent"
	}
	if s.Aborted == "" || s.NotSentCount == 0 {
		return missing
	}
	var b strings.Builder
	if missing != "" {
		b.WriteString(missing + "; ")
	}
	b.WriteString(strconv.Itoa(s.NotSentCount))
	b.WriteString(" row(s) were not sent (state READY): line ")
	for i, line := range s.NotSent[:min(len(s.NotSent), notSentShown)] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(line))
	}
	if more := s.NotSentCount - min(len(s.NotSent), notSentShown); more > 0 {
		b.WriteString(" and " + strconv.Itoa(more) + " more")
	}
	return b.String()
}

// RegeneratedText says that a report was written again from the ledger, and when.
func (s Summary) RegeneratedText() string {
	if s.Regenerated.IsZero() {
		return ""
	}
	return "Regenerated at " + words.FormatTime(s.Regenerated, s.Zone) + " from the ledger: states are as of that time, not as the run left them"
}

// KindText says what kind of run the report is of, in words: a dry run says that it sent nothing.
func (s Summary) KindText() string {
	if s.DryRun {
		return "dry run: the file was validated, nothing was sent or recorded"
	}
	if s.Kind == "" {
		return "run"
	}
	return s.Kind
}

// ApprovalText names who approved the run's file, and when; empty when it needed no approval.
func (s Summary) ApprovalText() string {
	if s.ApprovedBy == "" {
		return ""
	}
	return s.ApprovedBy + " at " + words.FormatTime(s.ApprovedAt, s.Zone)
}

// Summarize returns meta with Rows, ByState, Total and Unreadable computed from rows.
func Summarize(meta Summary, rows []Row) Summary {
	var t tally
	for _, r := range rows {
		t.add(r, meta.Aborted != "")
	}
	return t.summary(meta)
}

// tally counts rows by state as they go by, for a Summary.
type tally struct {
	totals  []StateTotal // stateOrder, then other states in the order seen
	index   map[string]int
	rows    int
	notSent []int // the first notSentShown READY lines of an aborted run
	ready   int
	skipped int
	// fileTotal sums every readable amount on its own, whatever the row's state.
	fileTotal       decimal.Decimal
	unreadable      int
	unreadableLines []int // the first notSentShown of them
}

// init lays out the fixed states, zeros included.
func (t *tally) init() {
	if t.index != nil {
		return
	}
	t.index = make(map[string]int, len(stateOrder))
	for i, s := range stateOrder {
		t.totals = append(t.totals, StateTotal{State: s, Amount: decimal.Zero})
		t.index[s] = i
	}
}

func (t *tally) add(r Row, aborted bool) {
	t.init()
	j, ok := t.index[r.State]
	if !ok {
		j = len(t.totals)
		t.totals = append(t.totals, StateTotal{State: r.State, Amount: decimal.Zero})
		t.index[r.State] = j
	}
	t.totals[j].Count++
	t.rows++
	if r.AmountText != "" {
		t.unreadable++
		if len(t.unreadableLines) < notSentShown {
			t.unreadableLines = append(t.unreadableLines, r.Line)
		}
	} else {
		t.totals[j].Amount = t.totals[j].Amount.Add(r.Amount)
		t.fileTotal = t.fileTotal.Add(r.Amount)
	}
	if r.Skipped {
		t.skipped++
	}
	if aborted && r.State == StateReady {
		if len(t.notSent) < notSentShown {
			t.notSent = append(t.notSent, r.Line)
		}
		t.ready++
	}
}

// summary is meta with the counts so far: the seven ledger states in a fixed order, zeros
// included, then any other state found, by name.
func (t *tally) summary(meta Summary) Summary {
	t.init()
	totals := slices.Clone(t.totals)
	others := totals[len(stateOrder):]
	slices.SortFunc(others, func(a, b StateTotal) int { return strings.Compare(a.State, b.State) })
	meta.Rows, meta.ByState, meta.Total, meta.Skipped = t.rows, totals, t.fileTotal, t.skipped
	meta.Unreadable, meta.UnreadableLines = t.unreadable, slices.Clone(t.unreadableLines)
	meta.NotSent, meta.NotSentCount = slices.Clone(t.notSent), t.ready
	return meta
}

func sumStates(totals []StateTotal) decimal.Decimal {
	sum := decimal.Zero
	for _, t := range totals {
		sum = sum.Add(t.Amount)
	}
	return sum
}

// TiesOut reports whether the amounts by state add up to the file's total, and their sum. A
// report that does not tie out says so in every summary, and the command that wrote it says so
// on stderr.
func (s Summary) TiesOut() (decimal.Decimal, bool) {
	sum := sumStates(s.ByState)
	return sum, sum.Equal(s.Total)
}

// UnreadableText says which rows' amounts are no number and so are not in the file's total;
// empty when every amount reads.
func (s Summary) UnreadableText() string {
	return unreadableText(s.Unreadable, s.UnreadableLines)
}

func unreadableText(n int, lines []int) string {
	if n == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(strconv.Itoa(n))
	b.WriteString(" row(s) with an amount that is not a number, not in the total: line ")
	for i, line := range lines {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(line))
	}
	if more := n - len(lines); more > 0 {
		b.WriteString(" and " + strconv.Itoa(more) + " more")
	}
	return b.String()
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

// amountString is the plain machine form of an amount: at least two decimals, never rounded (a
// rejected row may carry 1.234, and the report must show what the file said).
func amountString(d decimal.Decimal) string {
	if d.Exponent() < -2 {
		return d.String()
	}
	if s, ok := fixed2(d); ok {
		return s
	}
	return d.StringFixed(2)
}

// fixed2 is d.StringFixed(2) for the amounts of a payout file (a coefficient that fits an int64
// in sen), without the big integer that StringFixed formats through.
func fixed2(d decimal.Decimal) (string, bool) {
	if !d.Coefficient().IsInt64() {
		return "", false
	}
	c := d.CoefficientInt64()
	for e := d.Exponent(); e > -2; e-- {
		if c > math.MaxInt64/10 || c < math.MinInt64/10 {
			return "", false
		}
		c *= 10
	}
	neg := c < 0
	if neg {
		if c == math.MinInt64 {
			return "", false
		}
		c = -c
	}
	var buf [24]byte
	b := strconv.AppendInt(buf[:0], c/100, 10)
	b = append(b, '.', byte('0'+c%100/10), byte('0'+c%10))
	if neg {
		return "-" + string(b), true
	}
	return string(b), true
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
