package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/ledger"
)

// TestApprovalsAreKeptAsWritten: an approval reads back as written, exact amounts included, a run
// finds the approval it went ahead on, and the table refuses to be edited or emptied.
func TestApprovalsAreKeptAsWritten(t *testing.T) {
	ctx := context.Background()
	db, _ := mustOpen(t)
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	want := ledger.Approval{File: "payroll.csv", FileSHA256: "ab12", PlanDigest: "cd34", Rows: 3,
		Total: decimal.RequireFromString("3003.10"), NewPayouts: 2, NewTotal: decimal.RequireFromString("2002.05"),
		Providers: 25, ProvidersDigest: "ef56", Decision: ledger.ApprovalApproved, Actor: "bob@finance-pc",
		Maker: "alice@payroll-pc", At: at}
	id, err := db.AddApproval(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	want.ID = id
	list, err := db.Approvals(ctx, "ab12")
	if err != nil || len(list) != 1 {
		t.Fatalf("approvals of ab12: %+v %v", list, err)
	}
	got := list[0]
	if got.ID != want.ID || got.Actor != want.Actor || got.Maker != want.Maker || !got.At.Equal(at) ||
		!got.Total.Equal(want.Total) || !got.NewTotal.Equal(want.NewTotal) || got.NewPayouts != 2 || got.Rows != 3 {
		t.Errorf("read back %+v, want %+v", got, want)
	}
	if other, err := db.Approvals(ctx, "other"); err != nil || len(other) != 0 {
		t.Errorf("approvals of another file: %+v %v", other, err)
	}

	if _, ok, err := db.RunApproval(ctx, "RUN-1"); ok || err != nil {
		t.Errorf("a run with no approval: ok %v, %v", ok, err)
	}
	if err := db.LinkApproval(ctx, "RUN-1", id); err != nil {
		t.Fatal(err)
	}
	if a, ok, err := db.RunApproval(ctx, "RUN-1"); !ok || err != nil || a.ID != id {
		t.Errorf("run's approval %+v %v %v, want id %d", a, ok, err, id)
	}

	for _, stmt := range []string{`UPDATE approvals SET actor = 'alice@payroll-pc'`, `DELETE FROM approvals`} {
		if _, err := ledger.SQLOf(db).Exec(stmt); err == nil {
			t.Errorf("%s was allowed", stmt)
		}
	}
}
