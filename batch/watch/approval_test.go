package watch_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/batch/watch"
	"github.com/payout/payout/ledger"
)

// TestWatchAwaitsApproval: with the approval policy on, a dropped file pays nothing and waits in
// awaiting-approval with a note naming the command that approves it; the first pass after its
// approval pays it; a rejected one goes to failed with the reason; an expired approval leaves
// it waiting, and the note says so.
func TestWatchAwaitsApproval(t *testing.T) {
	ctx := context.Background()
	clock := &watchClock{t: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
	h := batchtest.NewHarness(t, sandbox.Options{})
	h.Cfg.Now = clock.Now
	h.Cfg.Approval = batch.ApprovalPolicy{Require: true, Actor: func() string { return "cron@server" },
		Owner: func(string) (string, error) { return "alice@payroll-pc", nil }}
	rig := newWatchRig(t, h, 0, clock.Now)
	decide := func(path, actor string, approve bool, reason string) {
		t.Helper()
		cfg := h.Cfg
		cfg.Approval.Actor = func() string { return actor }
		if _, _, err := batch.NewRunner(cfg).Decide(ctx, path, approve, reason); err != nil {
			t.Fatalf("%s decides on %s: %v", actor, path, err)
		}
	}
	pass := func(want int) {
		t.Helper()
		if exit, err := rig.w.Poll(ctx); exit != want || err != nil {
			t.Fatalf("pass: exit %d, %v; want %d\nlogs:\n%s", exit, err, want, rig.logs.String())
		}
	}

	rows := batchtest.Payroll(3, "AWA")
	batchtest.WritePayroll(t, rig.path(watch.InboxDir, ""), "payroll.csv", rows)
	pass(batch.ExitAwaitingApproval)
	waiting := rig.path(watch.AwaitingDir, "payroll.csv")
	if got := rig.listDir(watch.AwaitingDir); !slices.Equal(got, []string{"payroll.csv", "payroll.csv" + watch.WhySuffix}) {
		t.Fatalf("awaiting-approval holds %v", got)
	}
	note := batchtest.ReadFile(t, waiting+watch.WhySuffix)
	if !strings.Contains(note, "payout approve "+waiting) || !strings.Contains(note, "3 new payouts") {
		t.Errorf("note does not name the command and the plan:\n%s", note)
	}
	if n := h.Sandbox.Stats().Creates; n != 0 {
		t.Fatalf("a file awaiting approval sent %d payouts", n)
	}
	if req := lastApproval(t, h.DB); req.Decision != ledger.ApprovalRequested || req.File != waiting {
		t.Errorf("latest request %+v, want one naming %s", req, waiting)
	}
	runs := len(mustRuns(t, h.DB))
	pass(batch.ExitAwaitingApproval)
	if n := len(mustRuns(t, h.DB)); n != runs {
		t.Errorf("a pass over a file still waiting recorded %d runs", n-runs)
	}

	decide(waiting, "bob@finance-pc", true, "")
	pass(batch.ExitOK)
	if got := rig.listDir(watch.DoneDir); !slices.Equal(got, []string{"payroll.csv"}) {
		t.Fatalf("done holds %v after the approval", got)
	}
	if got := rig.listDir(watch.AwaitingDir); len(got) != 0 {
		t.Errorf("awaiting-approval still holds %v", got)
	}
	outs := rig.results()
	if paid := outs[len(outs)-1].Result; paid.ApprovedBy != "bob@finance-pc" {
		t.Errorf("paid run approved by %q, want bob@finance-pc", paid.ApprovedBy)
	}
	h.AssertExactlyOnce(rows, outs[len(outs)-1].Result)

	batchtest.WritePayroll(t, rig.path(watch.InboxDir, ""), "bonus.csv", batchtest.Payroll(2, "BON"))
	pass(batch.ExitAwaitingApproval)
	decide(rig.path(watch.AwaitingDir, "bonus.csv"), "carol@audit-pc", false, "bonus is paid in December")
	pass(batch.ExitRejected)
	if why := batchtest.ReadFile(t, rig.path(watch.FailedDir, "bonus.csv")+watch.WhySuffix); !strings.Contains(why, "carol@audit-pc REJECTED") ||
		!strings.Contains(why, "bonus is paid in December") {
		t.Errorf("failed note does not give the rejection:\n%s", why)
	}

	batchtest.WritePayroll(t, rig.path(watch.InboxDir, ""), "late.csv", batchtest.Payroll(2, "LAT"))
	pass(batch.ExitAwaitingApproval)
	decide(rig.path(watch.AwaitingDir, "late.csv"), "bob@finance-pc", true, "")
	clock.Add(8 * 24 * time.Hour)
	pass(batch.ExitAwaitingApproval)
	if note := batchtest.ReadFile(t, rig.path(watch.AwaitingDir, "late.csv")+watch.WhySuffix); !strings.Contains(note, "EXPIRED after 168h0m0s") {
		t.Errorf("note of an expired approval:\n%s", note)
	}
	if n := h.Sandbox.Stats().Creates; n != len(rows) {
		t.Errorf("service created %d payouts, want only the approved file's %d", n, len(rows))
	}
}

func lastApproval(t *testing.T, db *ledger.DB) ledger.Approval {
	t.Helper()
	list, err := db.Approvals(context.Background(), "")
	if err != nil || len(list) == 0 {
		t.Fatalf("approvals: %v %v", list, err)
	}
	return list[len(list)-1]
}

func mustRuns(t *testing.T, db *ledger.DB) []ledger.Run {
	t.Helper()
	runs, err := db.Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return runs
}
