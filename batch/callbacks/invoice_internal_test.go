package callbacks

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/ledger"
)

// TestAnEmptyInvoiceNamesNoPayout: the filter by invoice number with none set would select every
// payout; an empty number finds none, whatever the ledger holds.
func TestAnEmptyInvoiceNamesNoPayout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := batchtest.CreateLedger(t, filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{Logger: slog.New(slog.DiscardHandler)})
	if err := db.AddRun(ctx, ledger.Run{ID: "run-1", Kind: ledger.KindRun, Status: ledger.RunRunning}); err != nil {
		t.Fatal(err)
	}
	p := ledger.Payout{Ref: "R-1", RunID: "run-1", Line: 2, Recipient: "Ali", ProviderID: 1, Bank: "Maybank",
		Account: "1234567890", Amount: decimal.RequireFromString("10.00"), State: ledger.Ready}
	row := ledger.RunRow{RunID: "run-1", Line: 2, Ref: p.Ref, Recipient: p.Recipient, ProviderID: 1, Bank: p.Bank, Account: p.Account, Amount: "10.00"}
	if err := db.Record(ctx, "run-1", []ledger.RunRow{row}, []ledger.Payout{p}); err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(Config{Ledger: db, HashKey: []byte("key")})
	if err != nil {
		t.Fatal(err)
	}
	if got, found, err := h.byInvoice(ctx, ""); err != nil || found {
		t.Fatalf("byInvoice(\"\") = %+v, %t, %v; want none", got, found, err)
	}
}
