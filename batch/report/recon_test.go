package report_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/xuri/excelize/v2"

	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/batch/words"
)

func ptr(d decimal.Decimal) *decimal.Decimal { return &d }

func sampleRecon(tb testing.TB) []report.ReconRow {
	tb.Helper()
	return []report.ReconRow{
		{Ref: "INV-001", Line: 2, RunID: "run1", Recipient: "Aminah", Account: "0012345678", LedgerState: "SUCCEEDED",
			LedgerAmount: dec(tb, "1250.00"), ServiceStatus: "SUCCESS", ServiceAmount: ptr(dec(tb, "1250.00")),
			ServiceAccount: "0012345678", InvoiceNo: "PO-1"},
		{Ref: "INV-002", Line: 3, RunID: "run1", Recipient: "Tan", Account: "111", LedgerState: "SUBMITTED",
			LedgerAmount: dec(tb, "300.00"), ServiceStatus: "PENDING", ServiceAmount: ptr(dec(tb, "300.00")), ServiceAccount: "111", InvoiceNo: "PO-2"},
		{Ref: "INV-003", Line: 4, RunID: "run1", Recipient: "=evil()", Account: "222", LedgerState: "SUCCEEDED",
			LedgerAmount: dec(tb, "100.00"), ServiceStatus: "SUCCESS", ServiceAmount: ptr(dec(tb, "1000.00")), ServiceAccount: "333",
			InvoiceNo: "PO-3", Mismatches: []string{words.MismatchAmount, words.MismatchAccount}},
		{Ref: "INV-004", Line: 5, RunID: "run1", Recipient: "Siti", Account: "444", LedgerState: "UNKNOWN",
			LedgerAmount: dec(tb, "50.50"), Mismatches: []string{words.MismatchUnknown}, Message: "not found after 3 lookups"},
		{Ref: "INV-005", Line: 6, RunID: "run1", Recipient: "Kumar", Account: "555", LedgerState: "FAILED",
			LedgerAmount: dec(tb, "20.00"), ServiceStatus: "FAILED", ServiceAmount: ptr(dec(tb, "20.00")), ServiceAccount: "555", InvoiceNo: "PO-5"},
		{Ref: "INV-006", Line: 7, RunID: "run1", Recipient: "Lim", Account: "666", LedgerState: "REJECTED",
			LedgerAmount: dec(tb, "7.00"), Message: "bank: unknown provider"},
	}
}

func TestWriteReconciliation(t *testing.T) {
	rows := sampleRecon(t)
	dir := filepath.Join(t.TempDir(), "reports")
	p, err := report.WriteReconciliation(dir, report.ReconSummary{ID: "20261122T060000", Started: started, Ended: ended, Scope: "since 2026-11-01"}, rows)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(p.CSV) != "reconcile.20261122T060000.csv" || filepath.Base(p.XLSX) != "reconcile.20261122T060000.xlsx" ||
		filepath.Base(p.HTML) != "reconcile.20261122T060000.html" {
		t.Errorf("paths %+v", p)
	}
	golden(t, "reconcile.csv", readFile(t, p.CSV))
	golden(t, "reconcile.html", readFile(t, p.HTML))

	s := report.SummarizeReconciliation(report.ReconSummary{}, rows)
	if s.Rows != 6 || s.Mismatches != 2 || s.NotFinal != 2 || !s.Total.Equal(dec(t, "1727.50")) {
		t.Errorf("summary = rows %d, mismatches %d, not final %d, total %s", s.Rows, s.Mismatches, s.NotFinal, s.Total)
	}

	t.Run("csv", func(t *testing.T) {
		recs := readCSV(t, p.CSV)
		if strings.Join(recs[0], ",") != strings.Join(report.ReconHeader, ",") || len(recs) != 7 {
			t.Fatalf("header %q, %d records", recs[0], len(recs))
		}
		r := recs[3]
		if r[11] != "amount differs; account differs" || r[3] != "'=evil()" || r[8] != "1000.00" {
			t.Errorf("mismatch row = %q", r)
		}
		if recs[4][8] != "" {
			t.Errorf("service amount of a payout unknown to the service = %q, want empty", recs[4][8])
		}
	})

	t.Run("xlsx", func(t *testing.T) {
		f, err := excelize.OpenFile(p.XLSX)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if header, _ := f.GetRows(report.SheetRows); len(header) == 0 || !slices.Equal(header[0], report.ReconSheetHeader) {
			t.Errorf("the sheet's header row is not ReconSheetHeader %q", report.ReconSheetHeader)
		}
		if v, _ := f.GetCellValue(report.SheetRows, "C2"); v != "0012345678" {
			t.Errorf("account = %q", v)
		}
		if v, _ := f.GetCellValue(report.SheetRows, "E4", excelize.Options{RawCellValue: true}); v != "100" {
			t.Errorf("ledger amount raw = %q", v)
		}
		checkPrintSetup(t, f, []string{report.SheetRows})
	})

	t.Run("html", func(t *testing.T) {
		doc := parseHTML(t, p.HTML)
		_, summaryAt := byID(t, doc, "summary")
		rowsSection, rowsAt := byID(t, doc, "rows")
		if summaryAt >= rowsAt {
			t.Error("summary after rows")
		}
		got := bodyRows(firstWithClass(rowsSection, "table", "rows"))
		var refs []string
		for _, r := range got {
			refs = append(refs, r[0])
		}
		// mismatches, then not final, then failures and rejections, then successes
		if want := "INV-003 INV-004 INV-002 INV-005 INV-006 INV-001"; strings.Join(refs, " ") != want {
			t.Errorf("order %q, want %q", strings.Join(refs, " "), want)
		}
		if lis := elements(rowsSection, "li"); len(lis) != 3 {
			t.Errorf("%d mismatch items, want 3", len(lis))
		}
		tie, _ := byID(t, doc, "tie-groups")
		want := "File total RM 1,727.50 = succeeded RM 1,350.00 (2) + failed RM 20.00 (1) + pending RM 350.50 (2) + rejected RM 7.00 (1) = RM 1,727.50"
		if textOf(tie) != want {
			t.Errorf("tie-out\n got %q\nwant %q", textOf(tie), want)
		}
		banner, _ := byID(t, doc, "attention")
		if !strings.Contains(textOf(banner), "2 payout(s) with mismatches, 2 not final") {
			t.Errorf("banner = %q", textOf(banner))
		}
	})
}

func TestWriteReconciliationBadID(t *testing.T) {
	if _, err := report.WriteReconciliation(t.TempDir(), report.ReconSummary{ID: "../x"}, nil); !errors.Is(err, report.ErrBadName) {
		t.Errorf("err = %v, want ErrBadName", err)
	}
}
