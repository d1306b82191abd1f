package batch_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/repeats"
)

// exportedAgain is rows under new references, as last week's payroll exported again would be.
func exportedAgain(rows []batchtest.PayrollRow, prefix string) []batchtest.PayrollRow {
	again := make([]batchtest.PayrollRow, len(rows))
	for i, r := range rows {
		r.Ref = prefix + strings.TrimPrefix(r.Ref, strings.SplitN(r.Ref, "-", 2)[0])
		again[i] = r
	}
	return again
}

// paidWeek pays a payroll of six rows from week1.csv and returns its rows.
func paidWeek(ctx context.Context, t *testing.T, h *batchtest.Harness) []batchtest.PayrollRow {
	t.Helper()
	first := batchtest.Payroll(6, "WEEK1")
	if res := h.Run(ctx, batchtest.WritePayroll(t, h.Dir, "week1.csv", first), nil); res.ExitCode != exitcode.OK {
		t.Fatalf("first file: %+v", res)
	}
	return first
}

func TestPayrollExportedTwiceUnderNewReferencesIsHeld(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := batchtest.NewHarness(t, sandbox.Options{})
	first := paidWeek(ctx, t, h)
	again := exportedAgain(first, "WEEK1B")
	path := batchtest.WritePayroll(t, h.Dir, "week1-again.csv", again)

	res := h.Run(ctx, path, nil)
	if res.ExitCode != exitcode.Rejected || res.Rejected != len(again) || res.Submitted != 0 {
		t.Fatalf("the same payroll under new references: %+v, want every row held and nothing sent (exit 3)", res)
	}
	p := res.Problems[0]
	if !strings.Contains(p.Reason, read.ErrPossibleRepeat.Error()) || !strings.Contains(p.Reason, first[0].Ref) ||
		!strings.Contains(p.Reason, "week1.csv") || !strings.Contains(p.Reason, "--allow-repeat "+again[0].Ref) {
		t.Errorf("hold reason %q: want the earlier reference, its file, and how to pay it all the same", p.Reason)
	}
	for _, r := range again {
		if n := h.Sandbox.CreateCounts()[r.Ref]; n != 0 {
			t.Errorf("%s sent %d times while held", r.Ref, n)
		}
	}

	// One reference let through pays only that row, with --allow-partial.
	res = h.Run(ctx, path, func(c *batch.Config) {
		c.AllowPartial = true
		c.Repeats = repeats.Policy{Allow: map[string]bool{again[2].Ref: true}}
	})
	if res.ExitCode != exitcode.Attention || res.Submitted != 1 || h.Sandbox.CreateCounts()[again[2].Ref] != 1 {
		t.Fatalf("one reference allowed: %+v, want that row paid and the rest held", res)
	}
	// --allow-repeats pays the rest, each once.
	res = h.Run(ctx, path, func(c *batch.Config) { c.Repeats = repeats.Policy{AllowAll: true} })
	if res.ExitCode != exitcode.OK {
		t.Fatalf("--allow-repeats: %+v", res)
	}
	h.AssertExactlyOnce(again, res)
	for _, r := range first {
		if n := h.Sandbox.CreateCounts()[r.Ref]; n != 1 {
			t.Errorf("%s created %d times, want once", r.Ref, n)
		}
	}
}

func TestRepeatOutsideTheWindowIsPaid(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := batchtest.NewHarness(t, sandbox.Options{})
	first := batchtest.Payroll(3, "OLD")
	if res := h.Run(ctx, batchtest.WritePayroll(t, h.Dir, "old.csv", first), nil); res.ExitCode != exitcode.OK {
		t.Fatalf("first file: %+v", res)
	}
	again := exportedAgain(first, "NEXT")
	path := batchtest.WritePayroll(t, h.Dir, "next.csv", again)
	week := time.Now().Add(7 * 24 * time.Hour)
	res := h.Run(ctx, path, func(c *batch.Config) { c.Clock = batchtest.NewJumpingClock(week) })
	if res.ExitCode != exitcode.OK || res.Submitted != len(again) {
		t.Fatalf("the same payees a week later: %+v, want them paid (outside the 6-day window)", res)
	}
	// Within a window stretched to eight days, the same payees would have been held.
	again2 := exportedAgain(first, "LATE")
	res = h.Run(ctx, batchtest.WritePayroll(t, h.Dir, "late.csv", again2), func(c *batch.Config) {
		c.Clock = batchtest.NewJumpingClock(week)
		c.Repeats = repeats.Policy{Window: 8 * 24 * time.Hour}
	})
	if res.ExitCode != exitcode.Rejected {
		t.Fatalf("within an 8-day window: %+v, want held", res)
	}
}

func TestRepeatInsideTheFileIsHeld(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := batchtest.NewHarness(t, sandbox.Options{})
	rows := batchtest.Payroll(4, "INV")
	rows[3].Account, rows[3].Amount, rows[3].Bank = rows[1].Account, rows[1].Amount, rows[1].Bank // the same invoice entered twice
	path := batchtest.WritePayroll(t, h.Dir, "vendors.csv", rows)

	res := h.Run(ctx, path, nil)
	if res.ExitCode != exitcode.Rejected || res.Rejected != 1 || res.Problems[0].Line != 5 ||
		!strings.Contains(res.Problems[0].Reason, "as line 3") {
		t.Fatalf("a repeat inside the file: %+v, want line 5 held as a repeat of line 3, nothing paid", res)
	}
	res = h.Run(ctx, path, func(c *batch.Config) { c.Repeats = repeats.Policy{Allow: map[string]bool{rows[3].Ref: true}} })
	if res.ExitCode != exitcode.OK {
		t.Fatalf("the repeat allowed by reference: %+v", res)
	}
	h.AssertExactlyOnce(rows, res)
}

// A dry run holds the same rows whether the window's payouts are few enough to be read at once
// (a chunk's worth) or each row's payee is looked up: a row to an account paid last time, but
// of another amount, is no repeat either way.
func TestDryRunHoldsRepeatsWhateverTheWindowHolds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := batchtest.NewHarness(t, sandbox.Options{})
	again := exportedAgain(paidWeek(ctx, t, h), "WEEK1B")
	again[4].Amount = "1.23"
	path := batchtest.WritePayroll(t, h.Dir, "week1-again.csv", again)
	for _, chunk := range []int{0, 2} {
		res := h.Run(ctx, path, func(c *batch.Config) { c.DryRun, c.ChunkRows = true, chunk })
		if res.ExitCode != exitcode.Rejected || res.Rejected != len(again)-1 {
			t.Fatalf("chunks of %d rows: %+v, want every row held but the one of another amount", chunk, res)
		}
		for _, p := range res.Problems {
			if p.Line == 6 || !strings.Contains(p.Reason, read.ErrPossibleRepeat.Error()) {
				t.Errorf("chunks of %d rows: line %d held: %s", chunk, p.Line, p.Reason)
			}
		}
	}
}
