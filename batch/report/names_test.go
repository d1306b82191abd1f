package report_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/batch/words"
)

// A payout whose bank holds another name for the account is flagged in every form of the
// reconciliation report, apart from the mismatches between ledger and service, and listed first.
func TestReconciliationShowsNameMismatch(t *testing.T) {
	rows := []report.ReconRow{
		{Ref: "INV-007", Line: 8, RunID: "run1", Recipient: "Tan Mei Ling", Account: "777", LedgerState: "SUCCEEDED",
			LedgerAmount: dec(t, "80.00"), ServiceStatus: "SUCCESS", InvoiceNo: "PO-7", NameAtBank: "LIM WEI JIE", NameCheck: words.NameMismatch},
		{Ref: "INV-008", Line: 9, RunID: "run1", Recipient: "Muthu a/l Krishnan", Account: "888", LedgerState: "SUCCEEDED",
			LedgerAmount: dec(t, "90.00"), ServiceStatus: "SUCCESS", InvoiceNo: "PO-8", NameAtBank: "MUTHU KRISHNAN", NameCheck: words.NameMatch},
		{Ref: "INV-009", Line: 10, RunID: "run1", Recipient: "Siti", Account: "999", LedgerState: "SUBMITTED",
			LedgerAmount: dec(t, "10.00"), ServiceStatus: "PENDING", InvoiceNo: "PO-9"},
	}
	s := report.SummarizeReconciliation(report.ReconSummary{}, rows)
	if s.NameMismatches != 1 || s.Mismatches != 0 {
		t.Errorf("summary: %d name mismatches, %d mismatches; want 1, 0", s.NameMismatches, s.Mismatches)
	}
	p, err := report.WriteReconciliation(filepath.Join(t.TempDir(), "r"), report.ReconSummary{ID: "rec-names", Started: started, Ended: ended}, rows)
	if err != nil {
		t.Fatal(err)
	}

	recs := readCSV(t, p.CSV)
	col := func(name string) int {
		for i, h := range recs[0] {
			if h == name {
				return i
			}
		}
		t.Fatalf("no column %s in %q", name, recs[0])
		return -1
	}
	atBank, check := col("name_at_bank"), col("name_check")
	for i, want := range [][2]string{{"LIM WEI JIE", "mismatch"}, {"MUTHU KRISHNAN", "match"}, {"", ""}} {
		if got := [2]string{recs[i+1][atBank], recs[i+1][check]}; got != want {
			t.Errorf("CSV row %s: name at bank, check = %q, want %q", recs[i+1][0], got, want)
		}
	}

	html := string(readFile(t, p.HTML))
	for _, want := range []string{`<td id="name-mismatch-count">1</td>`, `id="name-attention"`,
		`<td class="name-mismatch text">LIM WEI JIE (name mismatch)</td>`, `<td class="text">MUTHU KRISHNAN</td>`} {
		if !strings.Contains(html, want) {
			t.Errorf("the HTML report lacks %s", want)
		}
	}
	if first, other := strings.Index(html, "INV-007"), strings.Index(html, "INV-009"); first < 0 || other < first {
		t.Errorf("the name mismatch is not listed before the payout not final")
	}

	f, err := excelize.OpenFile(p.XLSX)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	summary, err := f.GetRows(report.SheetSummary)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range summary {
		if len(r) >= 2 && r[0] == "Name mismatches" && r[1] == "1" {
			found = true
		}
	}
	if !found {
		t.Errorf("the XLSX summary has no \"Name mismatches 1\": %q", summary)
	}
}
