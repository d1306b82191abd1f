package report_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/xuri/excelize/v2"

	"github.com/payout/payout/batch/report"
)

// TestLongReportListsOnlyAttentionInXLSX: past XLSXListLimit rows the XLSX keeps the rows that
// need attention and says so, while the CSV keeps every row and the totals cover them all.
func TestLongReportListsOnlyAttentionInXLSX(t *testing.T) {
	n := report.XLSXListLimit + 1
	meta := report.Summary{RunID: "20261124T010000Z-abcd", Kind: "run", File: "big.csv", Started: time.Now(), Ended: time.Now()}
	paths, sum, err := report.WriteRunStream(t.TempDir(), "big.csv", meta, func(add func(report.Row) error) error {
		for i := range n {
			r := report.Row{Line: i + 2, Ref: "R", Recipient: "A", Bank: "Maybank", Account: "0123456789",
				Amount: decimal.New(100, 0), State: report.StateSucceeded}
			if i == 7 {
				r.State, r.Message = report.StateFailed, "refused"
			}
			if err := add(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rows != n || !sum.Total.Equal(decimal.New(int64(100*n), 0)) {
		t.Errorf("summary %d rows, total %s; want %d rows, all of them totalled", sum.Rows, sum.Total, n)
	}
	checkListedOnlyAttention(t, paths, n, "9")
}

// TestReconciliationPageShowsAtMostTheLimitOfPending: a reconciliation of many pending payouts
// lists HTMLRowLimit of them on its page and says how many more the CSV and XLSX have.
func TestReconciliationPageShowsAtMostTheLimitOfPending(t *testing.T) {
	rows := make([]report.ReconRow, report.HTMLRowLimit+2)
	for i := range rows {
		rows[i] = report.ReconRow{Ref: "P", Line: i + 2, RunID: "run", LedgerState: report.StateSubmitted, LedgerAmount: decimal.New(1, 0)}
	}
	paths, err := report.WriteReconciliation(t.TempDir(), report.ReconSummary{ID: "20261124T010000Z-abcd"}, rows)
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(paths.HTML)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte("2 more of them are not shown here")) {
		t.Errorf("the page does not say that 2 pending payouts are left to the CSV and XLSX")
	}
	if n := bytes.Count(page, []byte(`<td class="code">P<span class="sub">run, line `)); n != report.HTMLRowLimit {
		t.Errorf("the page lists %d payouts, want %d", n, report.HTMLRowLimit)
	}
}

// checkListedOnlyAttention checks the reports of n rows, of which only the one whose first column
// is first needs attention: the CSV lists every row, the XLSX only that one and says so.
func checkListedOnlyAttention(t *testing.T, paths report.Paths, n int, first string) {
	t.Helper()
	csvData, err := os.ReadFile(paths.CSV)
	if err != nil {
		t.Fatal(err)
	}
	if got := bytes.Count(csvData, []byte("\n")); got != n+1 {
		t.Errorf("CSV has %d lines, want the header and %d rows", got, n)
	}
	f, err := excelize.OpenFile(paths.XLSX)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows(report.SheetRows)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1][0] != first {
		t.Errorf("XLSX Rows sheet has %d rows (%v), want the header and the one needing attention, %s", len(rows), rows[min(1, len(rows)-1)], first)
	}
	note, err := f.GetCellValue(report.SheetSummary, "A1")
	if err != nil || !strings.Contains(note, fmt.Sprintf("lists the 1 of %d rows that need attention", n)) {
		t.Errorf("summary note %q, %v: want it to say the sheet lists only the rows needing attention", note, err)
	}
}
