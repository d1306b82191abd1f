package report_test

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/batch/words"
)

// TestReconciliationStreamHoldsTheLimits: a reconciliation of more rows than the XLSX and the
// page list, its rows coming in any order, lists in the XLSX only the row that needs attention,
// shows on its page the first rows in the page's order, and totals every row.
func TestReconciliationStreamHoldsTheLimits(t *testing.T) {
	n := report.XLSXListLimit + 1
	started := time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)
	paths, sum, err := report.WriteReconciliationStream(t.TempDir(), "20261124T010000Z-abcd", func(add func(report.ReconRow)) (report.ReconSummary, error) {
		for i := n - 1; i >= 0; i-- { // last line first
			r := report.ReconRow{Ref: fmt.Sprintf("S-%05d", i), Line: i + 2, RunID: "run", LedgerState: report.StateSucceeded,
				LedgerAmount: decimal.New(2, 0)}
			if i == 7 {
				r.Mismatches = []string{words.MismatchAmount}
			}
			add(r)
		}
		return report.ReconSummary{ID: "20261124T010000Z-abcd", Started: started, Ended: started.Add(time.Minute), Scope: "test"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rows != n || !sum.Total.Equal(decimal.New(int64(2*n), 0)) || sum.Mismatches != 1 || sum.Scope != "test" {
		t.Errorf("summary %+v, want %d rows totalling %d, one mismatch", sum, n, 2*n)
	}
	checkListedOnlyAttention(t, paths, n, "S-00007")
	page, err := os.ReadFile(paths.HTML)
	if err != nil {
		t.Fatal(err)
	}
	// The page lists the mismatch, then the succeeded rows of the lowest lines.
	first, last, beyond := []byte(">S-00000<"), []byte(fmt.Sprintf(">S-%05d<", report.HTMLRowLimit)), []byte(fmt.Sprintf(">S-%05d<", report.HTMLRowLimit+1))
	if !bytes.Contains(page, first) || !bytes.Contains(page, last) || bytes.Contains(page, beyond) {
		t.Errorf("the page does not show the first %d succeeded rows by line", report.HTMLRowLimit)
	}
	if want := fmt.Sprintf("%d further succeeded payout(s) are not shown here", n-1-report.HTMLRowLimit); !bytes.Contains(page, []byte(want)) {
		t.Errorf("the page does not say %q", want)
	}
	if bytes.Index(page, []byte(">S-00007<")) > bytes.Index(page, first) {
		t.Errorf("the row with a mismatch is not listed first")
	}
}
