package batch_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/batch/pool"
	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/ledger"
)

// TestErrorExit: the input's faults exit 3, however wrapped; everything else exits 1.
func TestErrorExit(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"file refused", &batch.FileError{Path: "a.csv", Errs: []*read.RowError{{Err: errors.New("no rows")}}}, batch.ExitRejected},
		{"row unreadable", fmt.Errorf("read: %w", &read.RowError{Line: 3, Column: "amount", Err: errors.New("bad")}), batch.ExitRejected},
		{"file unreadable", fmt.Errorf("open: %w", &read.InputError{Path: "a.xlsx", Err: errors.New("not a workbook")}), batch.ExitRejected},
		{"ledger", fmt.Errorf("record: %w", ledger.ErrLocked), batch.ExitAborted},
		{"signal", context.Canceled, batch.ExitAborted},
		{"aborted", pool.ErrAborted, batch.ExitAborted},
	}
	for _, tt := range tests {
		if got := batch.ErrorExit(tt.err); got != tt.want {
			t.Errorf("%s: ErrorExit(%v) = %d, want %d", tt.name, tt.err, got, tt.want)
		}
	}
}

// TestErrorExitOfRuns: a file without the columns a payout needs is the input's fault; a run
// whose ledger is closed is the infrastructure's.
func TestErrorExitOfRuns(t *testing.T) {
	h := batchtest.NewHarness(t, sandbox.Options{})
	noAmount := filepath.Join(h.Dir, "no-amount.csv")
	if err := os.WriteFile(noAmount, []byte("external_invoice_ref,recipient_reference,bank,third_party_account_no\nA-1,Ali,Maybank,000181590832\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := batch.NewRunner(h.Cfg).Run(context.Background(), noAmount)
	if err == nil || batch.ErrorExit(err) != batch.ExitRejected {
		t.Errorf("file without an amount column: err %v, exit %d; want exit 3", err, batch.ErrorExit(err))
	}

	good := batchtest.WritePayroll(t, h.Dir, "good.csv", batchtest.Payroll(2, "EXIT"))
	h.DB.Close()
	_, err = batch.NewRunner(h.Cfg).Run(context.Background(), good)
	if err == nil || batch.ErrorExit(err) != batch.ExitAborted {
		t.Errorf("closed ledger: err %v, exit %d; want exit 1", err, batch.ErrorExit(err))
	}
}

func TestWorseExit(t *testing.T) {
	tests := []struct {
		name       string
		a, b, want int
	}{
		{"ok and ok", batch.ExitOK, batch.ExitOK, batch.ExitOK},
		{"attention beats ok", batch.ExitOK, batch.ExitAttention, batch.ExitAttention},
		{"rejected beats attention", batch.ExitAttention, batch.ExitRejected, batch.ExitRejected},
		{"usage beats rejected", batch.ExitRejected, batch.ExitUsage, batch.ExitUsage},
		{"aborted beats everything", batch.ExitAborted, batch.ExitUsage, batch.ExitAborted},
		{"order does not matter", batch.ExitRejected, batch.ExitOK, batch.ExitRejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := batch.WorseExit(tt.a, tt.b); got != tt.want {
				t.Errorf("WorseExit(%d, %d) = %d, want %d", tt.a, tt.b, got, tt.want)
			}
		})
	}
}
