package report

import (
	"cmp"
	"container/heap"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/payout/payout/batch/words"
	"github.com/payout/payout/templates"
)

// reconKept keeps the rows a reconciliation page shows: in the page's order (reconRank, then run,
// line and reference), the first HTMLRowLimit rows that need attention and the first HTMLRowLimit
// of the others, counting the rest. Rows may come in any order.
type reconKept struct {
	attention, others reconHeap
	omittedAttention  int
	omitted           int
	seen              int
}

// keptRow is a row kept for the page, and when it came: of two rows the page orders alike, the
// earlier comes first.
type keptRow struct {
	row ReconRow
	seq int
}

func pageOrder(a, b keptRow) int {
	ra, rb := a.row, b.row
	return cmp.Or(cmp.Compare(reconRank(ra), reconRank(rb)), strings.Compare(ra.RunID, rb.RunID),
		cmp.Compare(ra.Line, rb.Line), strings.Compare(ra.Ref, rb.Ref), cmp.Compare(a.seq, b.seq))
}

// reconHeap holds kept rows with the last in page order on top, the one to drop for an earlier.
type reconHeap []keptRow

func (h reconHeap) Len() int           { return len(h) }
func (h reconHeap) Less(i, j int) bool { return pageOrder(h[i], h[j]) > 0 }
func (h reconHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *reconHeap) Push(x any)        { *h = append(*h, x.(keptRow)) }
func (h *reconHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// keep adds k to h, holding at most HTMLRowLimit rows; it reports whether a row was left out.
func (h *reconHeap) keep(k keptRow) bool {
	if h.Len() < HTMLRowLimit {
		heap.Push(h, k)
		return false
	}
	if pageOrder(k, (*h)[0]) < 0 {
		(*h)[0] = k
		heap.Fix(h, 0)
	}
	return true
}

func (k *reconKept) add(r ReconRow) {
	k.seen++
	row := keptRow{row: r, seq: k.seen}
	if reconRank(r) < reconRankSucceeded {
		if k.attention.keep(row) {
			k.omittedAttention++
		}
	} else if k.others.keep(row) {
		k.omitted++
	}
}

// render writes the page of the summary s with the rows kept.
func (k *reconKept) render(w io.Writer, s ReconSummary) error {
	g := groupRecon(s.ByState)
	groupSum := g.succeeded.Amount.Add(g.failed.Amount).Add(g.pending.Amount).Add(g.rejected.Amount)
	page := reconPage{
		Head: headView{Title: "Reconciliation " + s.ID, Kind: "reconciliation", ID: s.ID, Scope: s.Scope, ChainHead: s.ChainHead,
			Zone: words.ZoneText(s.Zone, s.Started), Started: words.FormatTime(s.Started, s.Zone), Ended: words.FormatTime(s.Ended, s.Zone),
			Duration: formatDuration(s.Started, s.Ended), Rows: s.Rows, Mismatches: s.Mismatches, NotFinal: s.NotFinal},
		Summary: summarize(s.ByState, s.Total, s.UnreadableText(), false),
		Groups: []groupView{
			{"succeeded", FormatMYR(g.succeeded.Amount), g.succeeded.Count},
			{"failed", FormatMYR(g.failed.Amount), g.failed.Count},
			{"pending", FormatMYR(g.pending.Amount), g.pending.Count},
			{"rejected", FormatMYR(g.rejected.Amount), g.rejected.Count},
		},
		GroupSum:         FormatMYR(groupSum),
		NameMismatches:   s.NameMismatches,
		Attention:        k.attention.Len() + k.omittedAttention,
		OmittedAttention: k.omittedAttention,
		Omitted:          k.omitted,
	}
	page.Summary.TiesOut = page.Summary.TiesOut && groupSum.Equal(s.Total)
	for _, rows := range []reconHeap{k.attention, k.others} {
		slices.SortFunc(rows, pageOrder)
		for _, kr := range rows {
			page.Rows = append(page.Rows, reconView(kr.row))
		}
	}
	return templates.Reconcile().Execute(w, page)
}

// reconView is a row as the reconciliation page shows it.
func reconView(r ReconRow) reconRowView {
	svc := ""
	if r.ServiceAmount != nil {
		svc = FormatMYR(*r.ServiceAmount)
	}
	ledgerAmount := FormatMYR(r.LedgerAmount)
	if r.LedgerAmountText != "" {
		ledgerAmount = r.LedgerAmountText
	}
	line := ""
	if r.Line != 0 {
		line = strconv.Itoa(r.Line)
	}
	return reconRowView{Ref: r.Ref, Line: line, RunID: r.RunID, Recipient: r.Recipient,
		Account: r.Account, LedgerState: r.LedgerState, Class: stateClass(r.LedgerState), LedgerAmount: ledgerAmount,
		ServiceStatus: r.ServiceStatus, ServiceAmount: svc, ServiceAccount: r.ServiceAccount, InvoiceNo: r.InvoiceNo,
		Message: r.Message, Mismatches: r.Mismatches, Attention: reconRank(r) < reconRankSucceeded,
		NameAtBank: r.NameAtBank, NameMismatch: r.NameCheck == words.NameMismatch}
}
