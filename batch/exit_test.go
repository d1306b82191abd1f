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
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/batch/pool"
	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/ledger"
)

// TestErrorExit: the input's faults exit 3, however wrapped; everything else exits 1.
func TestErrorExit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"file refused", &read.FileError{Path: "a.csv", Errs: []*read.RowError{{Err: errors.New("no rows")}}}, exitcode.Rejected},
		{"row unreadable", fmt.Errorf("read: %w", &read.RowError{Line: 3, Column: "amount", Err: errors.New("bad")}), exitcode.Rejected},
		{"file unreadable", fmt.Errorf("open: %w", &read.InputError{Path: "a.xlsx", Err: errors.New("not a workbook")}), exitcode.Rejected},
		{"ledger", fmt.Errorf("record: %w", ledger.ErrLocked), exitcode.Aborted},
		{"signal", context.Canceled, exitcode.Aborted},
		{"aborted", pool.ErrAborted, exitcode.Aborted},
	}
	for _, tt := range tests {
		if got := exitcode.OfError(tt.err); got != tt.want {
			t.Errorf("%s: exitcode.OfError(%v) = %d, want %d", tt.name, tt.err, got, tt.want)
		}
	}
}

// TestErrorExitOfRuns: a file without the columns a payout needs is the input's fault; a run
// whose ledger is closed is the infrastructure's.
func TestErrorExitOfRuns(t *testing.T) {
	t.Parallel()
	h := batchtest.NewHarness(t, sandbox.Options{})
	noAmount := filepath.Join(h.Dir, "no-amount.csv")
	if err := os.WriteFile(noAmount, []byte("external_invoice_ref,recipient_reference,bank,third_party_account_no\nA-1,Ali,Maybank,000181590832\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := batch.NewRunner(h.Cfg).Run(context.Background(), noAmount)
	if err == nil || exitcode.OfError(err) != exitcode.Rejected {
		t.Errorf("file without an amount column: err %v, exit %d; want exit 3", err, exitcode.OfError(err))
	}

	good := batchtest.WritePayroll(t, h.Dir, "good.csv", batchtest.Payroll(2, "EXIT"))
	h.DB.Close()
	_, err = batch.NewRunner(h.Cfg).Run(context.Background(), good)
	if err == nil || exitcode.OfError(err) != exitcode.Aborted {
		t.Errorf("closed ledger: err %v, exit %d; want exit 1", err, exitcode.OfError(err))
	}
}

func TestWorseExit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		a, b, want int
	}{
		{"ok and ok", exitcode.OK, exitcode.OK, exitcode.OK},
		{"attention beats ok", exitcode.OK, exitcode.Attention, exitcode.Attention},
		{"rejected beats attention", exitcode.Attention, exitcode.Rejected, exitcode.Rejected},
		{"usage beats rejected", exitcode.Rejected, exitcode.Usage, exitcode.Usage},
		{"aborted beats everything", exitcode.Aborted, exitcode.Usage, exitcode.Aborted},
		{"order does not matter", exitcode.Rejected, exitcode.OK, exitcode.Rejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exitcode.Worse(tt.a, tt.b); got != tt.want {
				t.Errorf("exitcode.Worse(%d, %d) = %d, want %d", tt.a, tt.b, got, tt.want)
			}
		})
	}
}
