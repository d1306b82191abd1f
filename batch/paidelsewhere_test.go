package batch_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/internal/batchtest"
)

// TestRunRowsPaidByAnotherFile: a file whose rows a run of another file paid (last month's
// references in this month's payroll) is skipped loudly; a rerun of the same file stays quiet.
func TestRunRowsPaidByAnotherFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := batchtest.NewHarness(t, sandbox.Options{})
	rows := batchtest.Payroll(4, "PAY")
	november := batchtest.WritePayroll(t, h.Dir, "november.csv", rows)
	first := h.Run(ctx, november, nil)
	if first.ExitCode != exitcode.OK {
		t.Fatalf("first run %+v", first)
	}
	logged := func(edit func(*batch.Config)) (batch.Result, string) {
		var logs batchtest.LogBuffer
		res := h.Run(ctx, november, func(c *batch.Config) {
			c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
			if edit != nil {
				edit(c)
			}
		})
		return res, logs.String()
	}

	// A new month's file, same references: every row was paid by november.csv.
	december := strings.Replace(string(mustRead(t, november)), "Salary November", "Salary December", -1)
	if err := os.WriteFile(november+".tmp", []byte(december), 0o600); err != nil {
		t.Fatal(err)
	}
	decPath := h.Dir + "/december.csv"
	if err := os.Rename(november+".tmp", decPath); err != nil {
		t.Fatal(err)
	}
	var logs batchtest.LogBuffer
	res := h.Run(ctx, decPath, func(c *batch.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	if res.ExitCode != exitcode.Attention || res.Skipped != len(rows) || res.SkippedOtherFile != len(rows) || res.Submitted != 0 {
		t.Fatalf("december %+v, want exit 4 with every row skipped as paid by another file", res)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "another file paid them") ||
		!strings.Contains(logs.String(), "november.csv") {
		t.Errorf("no warning naming november.csv in the logs:\n%s", logs.String())
	}
	byRef := h.AssertReport(res, len(rows), batchtest.FileTotal(rows))
	want := "already paid by november.csv in run " + first.RunID + " on " + first.StartedAt.UTC().Format(time.DateOnly)
	if got := strings.Join(byRef[rows[0].Ref], ","); !strings.Contains(got, want) {
		t.Errorf("report row %q, want it to say %q", got, want)
	}

	allowed := h.Run(ctx, decPath, func(c *batch.Config) { c.AllowPaidElsewhere = true })
	if allowed.ExitCode != exitcode.OK || allowed.SkippedOtherFile != len(rows) {
		t.Errorf("with AllowPaidElsewhere %+v, want exit 0, still counting the rows", allowed)
	}

	// The same file again: a rerun, quiet.
	if again, out := logged(nil); again.ExitCode != exitcode.OK || again.SkippedOtherFile != 0 || out != "" {
		t.Errorf("rerun %+v, logs %q: want exit 0 and nothing said", again, out)
	}
	// Other bytes under the name of a run that had paid everything: last period's name reused
	// (cron's exports/payroll.csv), so its paid rows are said, and the new row is paid.
	more := append(rows, batchtest.Payroll(5, "PAY")[4])
	batchtest.WritePayroll(t, h.Dir, "november.csv", more)
	if edited, out := logged(nil); edited.ExitCode != exitcode.Attention || edited.SkippedOtherFile != len(rows) ||
		edited.Submitted != 1 || !strings.Contains(out, "another file paid them") {
		t.Errorf("new bytes under a completed run's name %+v, logs %q: want the new row sent and the others said (exit 4)", edited, out)
	}
	if n := h.Sandbox.Stats().Creates; n != len(more) {
		t.Errorf("%d creates, want %d", n, len(more))
	}
}

// TestRunCorrectedFileIsARerun: a file whose run needed attention (a row rejected, the others
// paid with --allow-partial), corrected and run again under its name, resumes quietly.
func TestRunCorrectedFileIsARerun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := batchtest.NewHarness(t, sandbox.Options{})
	rows := batchtest.Payroll(4, "FIX")
	bad := append([]batchtest.PayrollRow(nil), rows...)
	bad[3].Amount = "12.345"
	path := batchtest.WritePayroll(t, h.Dir, "payroll.csv", bad)
	partial := h.Run(ctx, path, func(c *batch.Config) { c.AllowPartial = true })
	if partial.ExitCode != exitcode.Attention || partial.Rejected != 1 || partial.Submitted != 3 {
		t.Fatalf("partial run %+v, want 3 paid and 1 rejected", partial)
	}
	batchtest.WritePayroll(t, h.Dir, "payroll.csv", rows)
	var logs batchtest.LogBuffer
	fixed := h.Run(ctx, path, func(c *batch.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	if fixed.ExitCode != exitcode.OK || fixed.SkippedOtherFile != 0 || fixed.Submitted != 1 || logs.String() != "" {
		t.Errorf("corrected rerun %+v, logs %q: want the corrected row sent, exit 0 and nothing said", fixed, logs.String())
	}
	h.AssertExactlyOnce(rows, fixed)
}

func mustRead(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
