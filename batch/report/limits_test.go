package report_test

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/xuri/excelize/v2"

	"github.com/payout/payout/batch/report"
)

// sheetRows reads every data row of the Rows sheets of an XLSX report, in sheet order, checking
// that each sheet starts with the header.
func sheetRows(tb testing.TB, path string, header []string, wantSheets []string) [][]string {
	tb.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if got := f.GetSheetList(); !slices.Equal(got, wantSheets) {
		tb.Fatalf("sheets %q, want %q", got, wantSheets)
	}
	var all [][]string
	for _, name := range wantSheets[:len(wantSheets)-1] {
		rows, err := f.GetRows(name)
		if err != nil {
			tb.Fatal(err)
		}
		if len(rows) == 0 || !slices.Equal(rows[0], header) {
			tb.Fatalf("sheet %s starts with %q, want the header", name, rows)
		}
		all = append(all, rows[1:]...)
	}
	return all
}

func TestXLSXTooLongForOneSheetGoesOnOverFurtherSheets(t *testing.T) {
	defer report.SetSheetRowsMax(3)()
	rows := sampleRows(t)
	p := writeRun(t, sampleSummary(), rows)
	got := sheetRows(t, p.XLSX, report.RunSheetHeader, []string{"Rows", "Rows 2", "Rows 3", "Summary"})
	if len(got) != len(rows) {
		t.Fatalf("%d data rows over the sheets, want %d", len(got), len(rows))
	}
	for i, r := range got {
		if r[0] != strconv.Itoa(rows[i].Line) {
			t.Errorf("data row %d is line %s, want %d: every row once, in order", i, r[0], rows[i].Line)
		}
	}

	recon := sampleRecon(t)
	rp, err := report.WriteReconciliation(filepath.Join(t.TempDir(), "r"), report.ReconSummary{ID: "rec1", Started: started, Ended: ended}, recon)
	if err != nil {
		t.Fatal(err)
	}
	gotRecon := sheetRows(t, rp.XLSX, report.ReconSheetHeader, []string{"Rows", "Rows 2", "Summary"})
	if len(gotRecon) != len(recon) || gotRecon[len(recon)-1][0] != recon[len(recon)-1].Ref {
		t.Errorf("reconciliation rows over the sheets: %q", gotRecon)
	}
}

func TestXLSXCellCutToExcelLimitWithAMark(t *testing.T) {
	// Two UTF-16 units a rune: the limit is on units, not bytes or runes.
	long := strings.Repeat("😀", 20_000) + "END"
	rows := []report.Row{{Line: 2, Ref: "LONG-1", Amount: dec(t, "1"), State: "FAILED", Message: long}}
	p := writeRun(t, sampleSummary(), rows)
	f, err := excelize.OpenFile(p.XLSX)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := f.GetCellValue(report.SheetRows, "I2")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(utf16.Encode([]rune(got))); n > excelize.TotalCellChars {
		t.Errorf("cell holds %d UTF-16 units, over Excel's %d", n, excelize.TotalCellChars)
	}
	if !strings.HasSuffix(got, "the CSV report has the whole text]") || !strings.HasPrefix(got, "😀😀") {
		t.Errorf("cut cell does not say it was cut: ...%q", got[max(0, len(got)-120):])
	}
	if csv := readCSV(t, p.CSV); csv[1][10] != long {
		t.Errorf("the CSV's message is %d bytes, want the whole %d", len(csv[1][10]), len(long))
	}
}

// TestXLSXRowsSheetsLayout checks what a reader of every Rows sheet relies on: the header row
// frozen, the columns sized, codes formatted as text (@) and amounts as #,##0.00.
func TestXLSXRowsSheetsLayout(t *testing.T) {
	defer report.SetSheetRowsMax(4)()
	p := writeRun(t, sampleSummary(), sampleRows(t))
	f, err := excelize.OpenFile(p.XLSX)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	numFmt := func(sheet, ref string) int {
		t.Helper()
		id, err := f.GetCellStyle(sheet, ref)
		if err != nil {
			t.Fatal(err)
		}
		st, err := f.GetStyle(id)
		if err != nil {
			t.Fatal(err)
		}
		return st.NumFmt
	}
	for _, sheet := range []string{"Rows", "Rows 2"} {
		panes, err := f.GetPanes(sheet)
		if err != nil {
			t.Fatal(err)
		}
		if !panes.Freeze || panes.YSplit != 1 || panes.TopLeftCell != "A2" {
			t.Errorf("%s panes %+v, want the header row frozen", sheet, panes)
		}
		if w, err := f.GetColWidth(sheet, "I"); err != nil || w != 21 {
			t.Errorf("%s message column width %v (%v), want 21", sheet, w, err)
		}
		if got := numFmt(sheet, "B2"); got != 49 {
			t.Errorf("%s!B2 (reference) number format %d, want 49 (@)", sheet, got)
		}
		if got := numFmt(sheet, "E2"); got != 49 {
			t.Errorf("%s!E2 (account) number format %d, want 49 (@)", sheet, got)
		}
		if got := numFmt(sheet, "F2"); got != 4 {
			t.Errorf("%s!F2 (amount) number format %d, want 4 (#,##0.00)", sheet, got)
		}
	}
	checkPrintSetup(t, f, []string{"Rows", "Rows 2"})
}

// checkPrintSetup checks what a spreadsheet reads to print a report: every sheet landscape and
// fitted to one page wide, each rows sheet's header row repeated on every page, the Summary on
// one page.
func checkPrintSetup(t *testing.T, f *excelize.File, rowsSheets []string) {
	t.Helper()
	titles := map[string]string{}
	for _, d := range f.GetDefinedName() {
		if d.Name == "_xlnm.Print_Titles" {
			titles[d.Scope] = d.RefersTo
		}
	}
	for _, sheet := range append(rowsSheets, report.SheetSummary) {
		layout, err := f.GetPageLayout(sheet)
		if err != nil {
			t.Fatal(err)
		}
		props, err := f.GetSheetProps(sheet)
		if err != nil {
			t.Fatal(err)
		}
		tall := 0
		if sheet == report.SheetSummary {
			tall = 1
		}
		if layout.Orientation == nil || *layout.Orientation != "landscape" || layout.FitToWidth == nil || *layout.FitToWidth != 1 ||
			layout.FitToHeight == nil || *layout.FitToHeight != tall || props.FitToPage == nil || !*props.FitToPage {
			t.Errorf("%s prints %+v (fit to page %v), want landscape, 1 page wide, %d tall (0: as many as needed)", sheet, layout, props.FitToPage, tall)
		}
		if want := "'" + sheet + "'!$1:$1"; sheet != report.SheetSummary && titles[sheet] != want {
			t.Errorf("%s print titles %q, want its header row %q on every page", sheet, titles[sheet], want)
		}
	}
}
