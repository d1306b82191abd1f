package ledger_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/payout/payout/ledger"
)

// TestPagesGiveWhatOneReadGives: a run's lines read a range at a time are what RunLines gives in
// one query, and a set of payouts read a page at a time run by run is every payout of the set,
// by run, then line, whatever the page's size.
func TestPagesGiveWhatOneReadGives(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t)
	ctx := context.Background()
	started := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	var recorded []string // every payout, by run (the order they started in), then line
	for i, id := range []string{"pg-1", "pg-2", "pg-3"} {
		source := "src-a" // pg-1 and pg-2 are runs of one file; pg-3 of another
		if id == "pg-3" {
			source = "src-b"
		}
		if err := db.AddRun(ctx, ledger.Run{ID: id, Kind: "run", File: id + ".csv", Source: source,
			StartedAt: started.Add(time.Duration(i) * time.Hour), Status: "running"}); err != nil {
			t.Fatal(err)
		}
		var rows []ledger.RunRow
		var fresh []ledger.Payout
		for j := range 11 {
			p := payout(fmt.Sprintf("%s-%02d", id, j), "2.50", j+2)
			row := rowOf(p)
			switch {
			case j%4 == 1:
				row.Rejected, row.Reason = true, "amount: not a number"
			case id == "pg-2" && j < 6: // recorded by pg-1 at the same line
				continue
			default:
				fresh = append(fresh, p)
			}
			rows = append(rows, row)
		}
		if err := db.Record(ctx, id, rows, fresh); err != nil {
			t.Fatal(err)
		}
		recorded = append(recorded, refsOf(fresh)...)
		for k, p := range fresh {
			to := []ledger.State{ledger.Submitting, ledger.Submitted, ledger.Succeeded}[:min(k%5, 3)]
			if k%5 == 4 {
				to = []ledger.State{ledger.Submitting, ledger.Submitted, ledger.Failed}
			}
			for _, c := range walk(p.Ref, to...) {
				c.RunID, c.CountAttempt = id, c.To == ledger.Submitting
				if err := db.Apply(ctx, c); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, page := range []int{1, 3, 50} {
		for _, id := range []string{"pg-1", "pg-2", "pg-3"} {
			want := linesOf(t, db, id, ledger.LineRead{})
			got := linesOf(t, db, id, ledger.LineRead{Page: page})
			if fmt.Sprint(lineKeys(got)) != fmt.Sprint(lineKeys(want)) || len(want) == 0 {
				t.Errorf("run %s in ranges of %d: %v, want %v", id, page, lineKeys(got), lineKeys(want))
			}
		}
		sets := []ledger.Filter{
			{States: []ledger.State{ledger.Submitted, ledger.Submitting, ledger.Ready}},
			{CreatedSince: started},
			{CreatedSince: mustGet(t, db, "pg-2-06").CreatedAt}, // pg-2's fresh payouts, and pg-3's
			{RefusedSince: started},
		}
		for _, set := range sets {
			var want []string
			for _, ref := range recorded {
				if p := mustGet(t, db, ref); selects(set, p) {
					want = append(want, ref)
				}
			}
			got := pagedPayouts(t, db, set, page)
			if !slices.Equal(got, want) || len(want) == 0 {
				t.Errorf("%+v in pages of %d: %v, want %v", set, page, got, want)
			}
		}
	}
}

// selects is whether set selects p, as its fields say: its States, CreatedSince and
// RefusedSince (a payout whose create was refused, FAILED without an invoice number, that
// changed at or after it).
func selects(set ledger.Filter, p ledger.Payout) bool {
	switch {
	case len(set.States) > 0 && !slices.Contains(set.States, p.State):
		return false
	case !set.CreatedSince.IsZero() && p.CreatedAt.Before(set.CreatedSince):
		return false
	case !set.RefusedSince.IsZero() && (p.State != ledger.Failed || p.InvoiceNo != "" || p.UpdatedAt.Before(set.RefusedSince)):
		return false
	}
	return true
}

// linesOf is every line RunLines gives of the run, read as how says.
func linesOf(tb testing.TB, db *ledger.DB, runID string, how ledger.LineRead) []ledger.ReportLine {
	tb.Helper()
	var out []ledger.ReportLine
	err := db.RunLines(context.Background(), runID, how, func(l ledger.ReportLine) error {
		out = append(out, l)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func lineKeys(lines []ledger.ReportLine) []string {
	var out []string
	for _, l := range lines {
		k := fmt.Sprintf("%d:%s:%v", l.Row.Line, l.Row.Ref, l.Row.Rejected)
		if l.Payout != nil {
			k += ":" + string(l.Payout.State)
		}
		out = append(out, k)
	}
	return out
}

func refsOf(ps []ledger.Payout) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Ref)
	}
	return out
}

func pagedPayouts(tb testing.TB, db *ledger.DB, set ledger.Filter, page int) []string {
	tb.Helper()
	var out []string
	err := db.WalkPayouts(context.Background(), set, page, func(p ledger.Payout) error {
		out = append(out, p.Ref)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}
