package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/ledger"
)

// testFindRuns: a run is kept as added (its input's columns in file order) and as finished, and
// each field of the filter selects what it says, oldest first.
func testFindRuns(t *testing.T, e Engine) {
	l := e.New(t)
	ctx := context.Background()
	// Added out of order: runs are found by their start.
	for _, i := range []int{3, 0, 4, 1, 2, 5} {
		status, sha := ledger.RunFinished, "sha-a"
		if i%2 == 1 {
			status, sha = "running", "sha-b"
		}
		must(t, l.AddRun(ctx, ledger.Run{ID: fmt.Sprintf("run-%d", i), Kind: "run", File: sha + ".csv", FileSHA256: sha,
			StartedAt: t0.Add(time.Duration(i) * time.Hour), Status: status, Source: sha, Rows: i, Columns: []string{"Amount", "ref", "it's"}[:i%4]}))
	}
	must(t, l.AddRun(ctx, ledger.Run{ID: "rec", Kind: "reconcile", StartedAt: t0.Add(6 * time.Hour), Status: "running"}))
	ended := t0.Add(7 * time.Hour)
	must(t, l.FinishRun(ctx, "rec", "finished", 2, ended))
	if r, err := l.GetRun(ctx, "rec"); err != nil || r.Status != "finished" || r.ExitCode != 2 || !r.EndedAt.Equal(ended) || r.Kind != "reconcile" {
		t.Errorf("finished run: %+v %v", r, err)
	}
	if r, err := l.GetRun(ctx, "run-4"); err != nil || r.File != "sha-a.csv" || r.Rows != 4 || !r.StartedAt.Equal(t0.Add(4*time.Hour)) || !r.EndedAt.IsZero() {
		t.Errorf("run as added: %+v %v", r, err)
	}
	if r, err := l.GetRun(ctx, "run-3"); err != nil || !slices.Equal(r.Columns, []string{"Amount", "ref", "it's"}) {
		t.Errorf("columns of a run: %q, %v", r.Columns, err)
	}
	if r, err := l.GetRun(ctx, "rec"); err != nil || r.Columns != nil {
		t.Errorf("columns of a run added without: %q, %v; want none", r.Columns, err)
	}
	if _, err := l.GetRun(ctx, "nope"); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("an unknown run: %v, want ErrNotFound", err)
	}
	if err := l.FinishRun(ctx, "nope", "finished", 0, ended); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("finishing an unknown run: %v, want ErrNotFound", err)
	}
	all := []string{"run-0", "run-1", "run-2", "run-3", "run-4", "run-5", "rec"}
	for _, c := range []struct {
		f    ledger.RunFilter
		want []string
	}{
		{ledger.RunFilter{}, all},
		{ledger.RunFilter{Latest: 2}, []string{"run-5", "rec"}},
		{ledger.RunFilter{Latest: 10}, all},
		{ledger.RunFilter{Status: "running"}, []string{"run-1", "run-3", "run-5"}},
		{ledger.RunFilter{FileSHA256: "sha-a"}, []string{"run-0", "run-2", "run-4"}},
		{ledger.RunFilter{Source: "sha-b"}, []string{"run-1", "run-3", "run-5"}},
		{ledger.RunFilter{Since: t0.Add(4 * time.Hour)}, []string{"run-4", "run-5", "rec"}},
		{ledger.RunFilter{Status: "running", Latest: 2}, []string{"run-5"}},
		{ledger.RunFilter{FileSHA256: "sha-b", Since: t0.Add(2 * time.Hour)}, []string{"run-3", "run-5"}},
		{ledger.RunFilter{Source: "none"}, nil},
		{ledger.RunFilter{Listing: []string{}}, nil},
	} {
		runs, err := l.FindRuns(ctx, c.f)
		if got := ids(runs); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("FindRuns %+v: %v %v, want %v", c.f, got, err, c.want)
		}
	}
	testListing(t, l)
}

// testListing: a run lists the payouts of its own lines, and those a run of its source
// recorded before it; a reconciliation lists none.
func testListing(t *testing.T, l ledger.Ledger) {
	ctx := context.Background()
	first := ledger.Run{ID: "src-1", Kind: "run", File: "s.csv", FileSHA256: "s", Source: "s", StartedAt: t0.Add(8 * time.Hour), Status: "finished"}
	must(t, l.AddRun(ctx, first))
	p := payout("listed", "1.00", 2)
	must(t, l.Record(ctx, first.ID, []ledger.RunRow{rowOf(p)}, []ledger.Payout{p}))
	again := first
	again.ID, again.StartedAt = "src-2", t0.Add(9*time.Hour)
	must(t, l.AddRun(ctx, again))
	runs, err := l.FindRuns(ctx, ledger.RunFilter{Listing: []string{"listed", "nope"}})
	if got := ids(runs); err != nil || !slices.Equal(got, []string{"src-1", "src-2"}) {
		t.Errorf("runs listing a payout: %v %v, want its run and the later run of its source", got, err)
	}
}

func ids(runs []ledger.Run) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.ID)
	}
	return out
}

// testRunLines: a run's lines come back in line order, valid or not, each valid one with its
// payout as it stands, alike in one query and a page at a time, whole or as a report reads them.
func testRunLines(t *testing.T, e Engine) {
	l := e.New(t)
	ctx := context.Background()
	addRun(t, l, "big", 0)
	const n = 50
	var rows []ledger.RunRow
	var fresh []ledger.Payout
	for i := range n {
		p := payout(fmt.Sprintf("rl-%03d", i), "3.10", i+2)
		row := rowOf(p)
		switch i % 7 {
		case 3:
			row.Rejected, row.Reason = true, "amount: not a number"
		case 5: // valid, but the run stopped before its first request
		default:
			fresh = append(fresh, p)
		}
		rows = append(rows, row)
	}
	must(t, l.Record(ctx, "big", rows, fresh))
	must(t, l.Apply(ctx, ledger.Change{Ref: "rl-049", RunID: "big", From: ledger.Ready, To: ledger.Submitting, CountAttempt: true}))
	got := runLines(t, l, "big", ledger.LineRead{})
	if len(got) != n {
		t.Fatalf("%d lines, want %d", len(got), n)
	}
	payouts := 0
	for i, line := range got {
		want := i%7 != 3 && i%7 != 5
		if line.Row.Line != i+2 || line.Row.Ref != rows[i].Ref || line.Row.Rejected != rows[i].Rejected || line.Row.RunID != "big" ||
			(line.Payout != nil) != want || (want && (line.Payout.Ref != line.Row.Ref || line.Payout.Line != line.Row.Line ||
			line.Payout.Recipient != line.Row.Recipient || line.Payout.CreatedAt.IsZero())) {
			t.Fatalf("line %d: %+v payout %+v", i+2, line.Row, line.Payout)
		}
		if want {
			payouts++
		}
	}
	if payouts != len(fresh) {
		t.Errorf("%d payouts, want %d", payouts, len(fresh))
	}
	if p := got[n-1].Payout; p.State != ledger.Submitting || p.Attempts != 1 || !p.Amount.Equal(decimal.RequireFromString("3.1")) {
		t.Errorf("the last line's payout as it stands: %+v", p)
	}
	for _, page := range []int{1, 7, n, 2 * n} {
		paged := runLines(t, l, "big", ledger.LineRead{Page: page})
		if len(paged) != n {
			t.Errorf("in pages of %d: %d lines, want %d", page, len(paged), n)
			continue
		}
		for i, line := range paged {
			if line.Row != got[i].Row || (line.Payout == nil) != (got[i].Payout == nil) ||
				(line.Payout != nil && fmt.Sprintf("%+v", *line.Payout) != fmt.Sprintf("%+v", *got[i].Payout)) {
				t.Errorf("in pages of %d, line %d: %+v payout %+v, want %+v payout %+v", page, got[i].Row.Line,
					line.Row, line.Payout, got[i].Row, got[i].Payout)
			}
		}
	}
	sameReportLines(t, l, "big", ledger.LineRead{ReportOnly: true}, got)
	sameReportLines(t, l, "big", ledger.LineRead{ReportOnly: true, Page: 7}, got)
	for _, how := range []ledger.LineRead{{}, {Page: 7}, {ReportOnly: true}, {ReportOnly: true, Page: 7}} {
		if none := runLines(t, l, "no-such-run", how); len(none) != 0 {
			t.Errorf("an unknown run's lines (%+v): %d", how, len(none))
		}
	}
	stop := errors.New("stop")
	for _, how := range []ledger.LineRead{{}, {Page: 7}} {
		read := 0
		err := l.RunLines(ctx, "big", how, func(ledger.ReportLine) error {
			read++
			if read == 10 {
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) || read != 10 {
			t.Errorf("%+v: fn's error ended the read after %d lines with %v, want after 10 with %v", how, read, err, stop)
		}
	}
}

// runLines is every line RunLines gives of the run, read as how says.
func runLines(t *testing.T, l ledger.Ledger, runID string, how ledger.LineRead) []ledger.ReportLine {
	t.Helper()
	var out []ledger.ReportLine
	must(t, l.RunLines(context.Background(), runID, how, func(line ledger.ReportLine) error {
		out = append(out, line)
		return nil
	}))
	return out
}

// sameReportLines: a report's read of the run, as how says, gives the lines got, with the
// payout's fields a report shows.
func sameReportLines(t *testing.T, l ledger.Ledger, runID string, how ledger.LineRead, got []ledger.ReportLine) {
	t.Helper()
	i := 0
	err := l.RunLines(context.Background(), runID, how, func(line ledger.ReportLine) error {
		if i == len(got) {
			return fmt.Errorf("more lines than the %d read whole", len(got))
		}
		want := got[i]
		i++
		if line.Row != want.Row || (line.Payout == nil) != (want.Payout == nil) {
			return fmt.Errorf("line %d: %+v, want %+v", want.Row.Line, line, want)
		}
		if p, w := line.Payout, want.Payout; p != nil && (p.Ref != w.Ref || p.RunID != w.RunID || p.State != w.State || !p.Amount.Equal(w.Amount) ||
			p.InvoiceNo != w.InvoiceNo || p.TransactionStatus != w.TransactionStatus || p.Attempts != w.Attempts || p.LastError != w.LastError ||
			p.RefusalConfirmed != w.RefusalConfirmed) {
			return fmt.Errorf("line %d: payout %+v, want %+v", want.Row.Line, *p, *w)
		}
		return nil
	})
	if err != nil || i != len(got) {
		t.Errorf("RunLines %+v: %d of %d lines, %v", how, i, len(got), err)
	}
}
