package report

import (
	"cmp"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch/words"
	"github.com/payout/payout/templates"
)

// HTMLRowLimit caps the rows of an HTML report that need attention, and apart those that need
// none (SUCCEEDED, SUBMITTED): beyond it the page says how many more there are, and the CSV, which
// always holds every row, has them.
const HTMLRowLimit = 5000

// The view types carry only formatted strings: the templates do no arithmetic and need no funcs.

type stateView struct {
	State, Class, Amount string
	Count                int
	Attention            bool
}

type barView struct {
	X, Width, Class, Title string
}

type summaryView struct {
	States   []stateView
	Bar      []barView
	BarLabel string
	Total    string
	SumText  string
	TiesOut  bool
	Rows     int
	// Unreadable names the rows whose amount is no number, counted apart; empty when none.
	Unreadable string
}

type headView struct {
	Title, Kind, ID, File, SHA256, Started, Ended, Duration, Scope, ChainHead string
	Approved                                                                  string
	Zone                                                                      string // the zone of every time shown
	Rows, Skipped, Mismatches, NotFinal                                       int
	DryRun                                                                    bool
	// Aborted, NotSent and Regenerated are the lines of Summary's AbortedText, NotSentText and
	// RegeneratedText; empty when they do not apply.
	Aborted, NotSent, Regenerated string
}

type rowView struct {
	Line, Ref, Recipient, Provider, Bank, Account, Amount, State, Class string
	InvoiceNo, TransactionStatus, Message                               string
	Attention                                                           bool
}

type runPage struct {
	Head      headView
	Summary   summaryView
	Rows      []rowView
	Attention int
	// OmittedAttention and Omitted count the rows needing attention, and the others, that the
	// page does not list for their number.
	OmittedAttention int
	Omitted          int
}

func stateClass(state string) string {
	switch state {
	case StateSucceeded:
		return "ok"
	case StateSubmitted:
		return "pending"
	case StateSubmitting, StateUnknown:
		return "unknown"
	case StateReady:
		return "ready"
	case StateFailed:
		return "failed"
	case StateRejected:
		return "rejected"
	}
	return "other"
}

// attentionRank orders rows for people: failures first, then what is not finished, then what
// went through. Lower comes first.
func attentionRank(state string, dryRun bool) int {
	switch state {
	case StateFailed:
		return 0
	case StateRejected:
		return 1
	case StateUnknown:
		return 2
	case StateSubmitting:
		return 3
	case StateReady:
		if dryRun {
			return 6 // valid and, in a dry run, exactly what was expected
		}
		return 4
	case StateSubmitted:
		return 6
	case StateSucceeded:
		return 7
	}
	return 5
}

const attentionMax = 5 // ranks up to this need attention

func summarize(totals []StateTotal, total decimal.Decimal, unreadable string, dryRun bool) summaryView {
	v := summaryView{Total: FormatMYR(total), Unreadable: unreadable}
	sum := decimal.Zero
	for _, t := range totals {
		sum = sum.Add(t.Amount)
		v.Rows += t.Count
		v.States = append(v.States, stateView{State: t.State, Class: stateClass(t.State), Amount: FormatMYR(t.Amount),
			Count: t.Count, Attention: t.Count > 0 && attentionRank(t.State, dryRun) <= attentionMax})
	}
	v.SumText = FormatMYR(sum)
	v.TiesOut = sum.Equal(total)
	v.Bar, v.BarLabel = bar(totals)
	return v
}

// bar lays out the states as segments of a 100-unit bar, by amount, or by count when there is no
// amount at all. Widths are computed in decimal and the last segment takes the remainder, so the
// bar is always exactly full.
func bar(totals []StateTotal) ([]barView, string) {
	weight := func(t StateTotal) decimal.Decimal { return t.Amount.Abs() }
	label := "by amount"
	whole := decimal.Zero
	for _, t := range totals {
		whole = whole.Add(weight(t))
	}
	if whole.IsZero() {
		weight = func(t StateTotal) decimal.Decimal { return decimal.NewFromInt(int64(t.Count)) }
		label = "by row count"
		for _, t := range totals {
			whole = whole.Add(weight(t))
		}
	}
	if whole.IsZero() {
		return nil, "no rows"
	}
	hundred := decimal.NewFromInt(100)
	var segs []barView
	var used decimal.Decimal
	var last int
	for i, t := range totals {
		if !weight(t).IsZero() {
			last = i
		}
	}
	for i, t := range totals {
		w := weight(t)
		if w.IsZero() {
			continue
		}
		width := w.Mul(hundred).Div(whole).Round(3)
		if i == last {
			width = hundred.Sub(used)
		}
		segs = append(segs, barView{X: used.String(), Width: width.String(), Class: stateClass(t.State),
			Title: t.State + ": " + strconv.Itoa(t.Count) + " row(s), " + FormatMYR(t.Amount)})
		used = used.Add(width)
	}
	return segs, label
}

func formatDuration(start, end time.Time) string {
	if start.IsZero() || end.IsZero() {
		return ""
	}
	return end.Sub(start).Round(time.Millisecond).String()
}

// writeRunHTML renders the run page once every row has arrived: only the rows it shows are kept.
func writeRunHTML(w io.Writer, rows <-chan []Row, dryRun bool, summary func() Summary) error {
	var kept htmlRows
	for batch := range rows {
		for _, r := range batch {
			kept.add(r, dryRun)
		}
	}
	return kept.render(w, summary())
}

// htmlRows keeps the rows a run page shows: the first HTMLRowLimit rows that need attention and
// the first HTMLRowLimit of the others, counting the rest.
type htmlRows struct {
	attention, others []rankedRow
	omittedAttention  int
	omitted           int
}

type rankedRow struct {
	rank int
	view rowView
}

func (h *htmlRows) add(r Row, dryRun bool) {
	rank := attentionRank(r.State, dryRun)
	switch {
	case rank <= attentionMax && len(h.attention) < HTMLRowLimit:
		h.attention = append(h.attention, rankedRow{rank, runRowView(r, true)})
	case rank <= attentionMax:
		h.omittedAttention++
	case len(h.others) < HTMLRowLimit:
		h.others = append(h.others, rankedRow{rank, runRowView(r, false)})
	default:
		h.omitted++
	}
}

// render writes the page: the rows that need attention first, then the others, each by rank
// and then by line.
func (h *htmlRows) render(w io.Writer, s Summary) error {
	page := runPage{
		Head: headView{Title: "Payout run " + s.RunID, Kind: s.Kind, ID: s.RunID, File: s.File, SHA256: s.FileSHA256,
			Zone: words.ZoneText(s.Zone, s.Started), Started: words.FormatTime(s.Started, s.Zone), Ended: words.FormatTime(s.Ended, s.Zone),
			Duration: formatDuration(s.Started, s.Ended), Rows: s.Rows, Skipped: s.Skipped, DryRun: s.DryRun,
			Aborted: s.AbortedText(), NotSent: s.NotSentText(), Regenerated: s.RegeneratedText(), Approved: s.ApprovalText(),
			ChainHead: s.ChainHead},
		Summary:          summarize(s.ByState, s.Total, s.UnreadableText(), s.DryRun),
		Attention:        len(h.attention) + h.omittedAttention,
		OmittedAttention: h.omittedAttention,
		Omitted:          h.omitted,
	}
	page.Rows = make([]rowView, 0, len(h.attention)+len(h.others))
	for _, rows := range [][]rankedRow{h.attention, h.others} {
		// Rows arrive in line order, and a stable sort keeps it within a rank.
		slices.SortStableFunc(rows, func(a, b rankedRow) int { return cmp.Compare(a.rank, b.rank) })
		for _, r := range rows {
			page.Rows = append(page.Rows, r.view)
		}
	}
	return templates.Run().Execute(w, page)
}

// runRowView is a row as the run page shows it: amounts for people, blanks for what is unknown.
func runRowView(r Row, attention bool) rowView {
	amt, numeric := rowAmount(r)
	if numeric {
		amt = FormatMYR(r.Amount)
	}
	provider := ""
	if r.ProviderID != 0 {
		provider = strconv.FormatInt(r.ProviderID, 10)
	}
	return rowView{Line: strconv.Itoa(r.Line), Ref: r.Ref, Recipient: r.Recipient, Provider: provider, Bank: r.Bank,
		Account: r.Account, Amount: amt, State: r.State, Class: stateClass(r.State), InvoiceNo: r.InvoiceNo,
		TransactionStatus: r.TransactionStatus, Message: r.Message, Attention: attention}
}
