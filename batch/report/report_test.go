package report_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"flag"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/xuri/excelize/v2"

	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/batch/words"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func dec(tb testing.TB, s string) decimal.Decimal {
	tb.Helper()
	d, err := decimal.NewFromString(s)
	if err != nil {
		tb.Fatalf("decimal %q: %v", s, err)
	}
	return d
}

var (
	started = time.Date(2026, 11, 22, 8, 30, 0, 0, time.UTC)
	ended   = started.Add(83*time.Second + 250*time.Millisecond)
)

// sampleRows covers every state, formula-looking text, an account with leading zeros, an amount
// that did not parse and one with three decimals, listed by line.
func sampleRows(tb testing.TB) []report.Row {
	tb.Helper()
	return []report.Row{
		{Line: 2, Ref: "INV-001", Recipient: "Aminah binti Abdullah", ProviderID: 12, Bank: "Maybank", Account: "0012345678",
			Amount: dec(tb, "1250.00"), State: "SUCCEEDED", InvoiceNo: "PO-9001", TransactionStatus: "SUCCESS"},
		{Line: 3, Ref: "INV-002", Recipient: "=HYPERLINK(\"http://evil\",\"x\")", ProviderID: 14, Bank: "CIMB", Account: "7000000001",
			Amount: dec(tb, "1234567.5"), State: "SUBMITTED", InvoiceNo: "PO-9002", TransactionStatus: "PENDING"},
		{Line: 4, Ref: "@SUM(A1)", Recipient: "Tan Ah Kow", ProviderID: 12, Bank: "Maybank", Account: "123",
			Amount: dec(tb, "10"), State: "FAILED", InvoiceNo: "", TransactionStatus: "FAILED", Message: "+ refused: account closed"},
		{Line: 5, Ref: "INV-004", Recipient: "Lee <b>bold</b> & Co", Bank: "Nowhere Bank", Account: "555",
			AmountText: "-1+2", State: "REJECTED", Message: "amount: not a number"},
		{Line: 6, Ref: "INV-005", Recipient: "Siti", ProviderID: 12, Bank: "Maybank", Account: "0000123456",
			Amount: dec(tb, "0.05"), State: "UNKNOWN", Message: "outcome unknown: lookups failed"},
		{Line: 7, Ref: "INV-006", Recipient: " \tTab lead", ProviderID: 12, Bank: "Maybank", Account: "111",
			Amount: dec(tb, "1.234"), State: "REJECTED", Message: "amount: at most 2 decimals"},
		{Line: 8, Ref: "INV-007", Recipient: "Kumar", ProviderID: 14, Bank: "CIMB", Account: "222",
			Amount: dec(tb, "99.99"), State: "SUCCEEDED", InvoiceNo: "PO-9007", TransactionStatus: "SUCCESS", Skipped: true},
	}
}

func sampleSummary() report.Summary {
	return report.Summary{RunID: "20261122T083000-ab12", Kind: "run", File: "/in/payroll-nov.csv",
		FileSHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", Started: started, Ended: ended}
}

func golden(tb testing.TB, name string, got []byte) {
	tb.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		tb.Errorf("%s differs from the golden file; run `go test ./batch/report -update` and review the diff\ngot:\n%s", name, got)
	}
}

func writeRun(tb testing.TB, s report.Summary, rows []report.Row) report.Paths {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "reports")
	p, err := report.WriteRun(dir, "/in/payroll-nov.csv", s, rows)
	if err != nil {
		tb.Fatalf("WriteRun: %v", err)
	}
	return p
}

func readFile(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestWriteRunGolden(t *testing.T) {
	p := writeRun(t, sampleSummary(), sampleRows(t))
	golden(t, "run.result.csv", readFile(t, p.CSV))
	golden(t, "run.report.html", readFile(t, p.HTML))
}

func TestWriteRunNamesAndModes(t *testing.T) {
	p := writeRun(t, sampleSummary(), sampleRows(t))
	dir := filepath.Dir(p.CSV)
	want := []string{"payroll-nov.20261122T083000-ab12.report.html", "payroll-nov.20261122T083000-ab12.result.csv",
		"payroll-nov.20261122T083000-ab12.result.xlsx"}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name()) // a leftover temporary file would show here
	}
	if !slices.Equal(names, want) {
		t.Errorf("files = %q, want %q", names, want)
	}
	if got := p.List(); len(got) != 3 || got[0] != p.CSV || got[1] != p.XLSX || got[2] != p.HTML {
		t.Errorf("List() = %q", got)
	}
	di, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm()&^0o750 != 0 {
		t.Errorf("dir mode %v, want at most 0750", di.Mode().Perm())
	}
	for _, f := range p.List() {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600: reports hold account numbers", f, fi.Mode().Perm())
		}
	}
}

func TestWriteRunRewritesInPlace(t *testing.T) {
	dir := t.TempDir()
	rows := sampleRows(t)
	if _, err := report.WriteRun(dir, "payroll.xlsx", sampleSummary(), rows); err != nil {
		t.Fatal(err)
	}
	rows[1].State = "SUCCEEDED"
	p, err := report.WriteRun(dir, "payroll.xlsx", sampleSummary(), rows)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(p.XLSX, "payroll.20261122T083000-ab12.result.xlsx") {
		t.Errorf("XLSX path %q", p.XLSX)
	}
	recs := readCSV(t, p.CSV)
	if recs[2][7] != "SUCCEEDED" {
		t.Errorf("rewritten report state = %q, want SUCCEEDED", recs[2][7])
	}
	matches, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(matches) != 0 {
		t.Errorf("temporary files left: %q", matches)
	}
}

func TestWriteRunBadID(t *testing.T) {
	for _, id := range []string{"", "..", "a/b", `a\b`} {
		_, err := report.WriteRun(t.TempDir(), "f.csv", report.Summary{RunID: id}, nil)
		if !errors.Is(err, report.ErrBadName) {
			t.Errorf("run id %q: err = %v, want ErrBadName", id, err)
		}
	}
}

func readCSV(tb testing.TB, path string) [][]string {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		tb.Fatalf("read %s: %v", path, err)
	}
	return recs
}

func TestRunCSV(t *testing.T) {
	rows := sampleRows(t)
	p := writeRun(t, sampleSummary(), rows)
	recs := readCSV(t, p.CSV)
	wantHeader := "line,external_invoice_ref,recipient_reference,payout_service_id,bank,third_party_account_no,amount,state,payout_invoice_no,transaction_status,message"
	if got := strings.Join(recs[0], ","); got != wantHeader {
		t.Fatalf("header = %s", got)
	}
	if len(recs) != len(rows)+1 {
		t.Fatalf("%d records, want %d: the CSV is the rows only", len(recs), len(rows)+1)
	}
	tests := []struct {
		name     string
		row, col int
		want     string
	}{
		{"account keeps leading zeros", 1, 5, "0012345678"},
		{"amount plain with two decimals", 1, 6, "1250.00"},
		{"amount with one decimal padded", 2, 6, "1234567.50"},
		{"formula recipient neutralised", 2, 2, `'=HYPERLINK("http://evil","x")`},
		{"at-sign ref neutralised", 3, 1, "'@SUM(A1)"},
		{"plus message neutralised", 3, 10, "'+ refused: account closed"},
		{"unparsed amount kept as neutralised text", 4, 6, "'-1+2"},
		{"missing provider is empty", 4, 3, ""},
		{"three decimals never rounded", 6, 6, "1.234"},
		{"leading space then tab neutralised", 6, 2, "' \tTab lead"},
		{"plain text untouched", 7, 2, "Kumar"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := recs[tt.row][tt.col]; got != tt.want {
				t.Errorf("record %d column %s = %q, want %q", tt.row, recs[0][tt.col], got, tt.want)
			}
		})
	}
}

func TestRunXLSX(t *testing.T) {
	p := writeRun(t, sampleSummary(), sampleRows(t))
	f, err := excelize.OpenFile(p.XLSX)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := f.GetSheetList(); !slices.Equal(got, []string{report.SheetRows, report.SheetSummary}) {
		t.Fatalf("sheets = %q", got)
	}
	header, err := f.GetRows(report.SheetRows)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(header[0], report.RunSheetHeader) {
		t.Errorf("header = %q", header[0])
	}
	if len(header) != 8 {
		t.Errorf("%d rows, want header + 7", len(header))
	}

	textCell := func(t *testing.T, sheet, ref, want string) {
		t.Helper()
		typ, err := f.GetCellType(sheet, ref)
		if err != nil {
			t.Fatal(err)
		}
		if typ != excelize.CellTypeInlineString && typ != excelize.CellTypeSharedString {
			t.Errorf("%s!%s type %v, want text", sheet, ref, typ)
		}
		if got, _ := f.GetCellValue(sheet, ref); got != want {
			t.Errorf("%s!%s = %q, want %q", sheet, ref, got, want)
		}
		if formula, _ := f.GetCellFormula(sheet, ref); formula != "" {
			t.Errorf("%s!%s has formula %q", sheet, ref, formula)
		}
	}
	numberCell := func(t *testing.T, sheet, ref, raw, shown string) {
		t.Helper()
		typ, err := f.GetCellType(sheet, ref)
		if err != nil {
			t.Fatal(err)
		}
		if typ != excelize.CellTypeUnset && typ != excelize.CellTypeNumber {
			t.Errorf("%s!%s type %v, want number", sheet, ref, typ)
		}
		if got, _ := f.GetCellValue(sheet, ref, excelize.Options{RawCellValue: true}); got != raw {
			t.Errorf("%s!%s raw = %q, want %q", sheet, ref, got, raw)
		}
		if got, _ := f.GetCellValue(sheet, ref); got != shown {
			t.Errorf("%s!%s shown = %q, want %q", sheet, ref, got, shown)
		}
	}
	t.Run("account stays text with leading zeros", func(t *testing.T) { textCell(t, report.SheetRows, "E2", "0012345678") })
	t.Run("other account with zeros", func(t *testing.T) { textCell(t, report.SheetRows, "E6", "0000123456") })
	t.Run("amount numeric with 2-decimal format", func(t *testing.T) {
		numberCell(t, report.SheetRows, "F2", "1250", "1,250.00")
	})
	t.Run("large amount exact", func(t *testing.T) { numberCell(t, report.SheetRows, "F3", "1234567.5", "1,234,567.50") })
	t.Run("small amount exact", func(t *testing.T) { numberCell(t, report.SheetRows, "F6", "0.05", "0.05") })
	t.Run("line numeric", func(t *testing.T) { numberCell(t, report.SheetRows, "A2", "2", "2") })
	t.Run("formula recipient neutralised", func(t *testing.T) {
		textCell(t, report.SheetRows, "C3", `'=HYPERLINK("http://evil","x")`)
	})
	t.Run("formula ref neutralised", func(t *testing.T) { textCell(t, report.SheetRows, "B4", "'@SUM(A1)") })
	t.Run("unparsed amount is text", func(t *testing.T) { textCell(t, report.SheetRows, "F5", "'-1+2") })
	t.Run("three-decimal amount is text, not rounded", func(t *testing.T) { textCell(t, report.SheetRows, "F7", "1.234") })

	summary, err := f.GetRows(report.SheetSummary)
	if err != nil {
		t.Fatal(err)
	}
	find := func(label string) int {
		for i, r := range summary {
			if len(r) > 0 && r[0] == label {
				return i + 1
			}
		}
		t.Fatalf("summary has no %q row: %q", label, summary)
		return 0
	}
	t.Run("summary sha", func(t *testing.T) {
		textCell(t, report.SheetSummary, "B"+itoa(find("File SHA-256")), sampleSummary().FileSHA256)
	})
	t.Run("summary total exact", func(t *testing.T) {
		// 1250 + 1234567.5 + 10 + 0 + 0.05 + 1.234 + 99.99
		numberCell(t, report.SheetSummary, "C"+itoa(find("Total")), "1235928.774", "1,235,928.77")
	})
	t.Run("summary failed", func(t *testing.T) { numberCell(t, report.SheetSummary, "B"+itoa(find("FAILED")), "1", "1") })
}

func itoa(n int) string { return decimal.NewFromInt(int64(n)).String() }

func TestXLSXAmountBeyondFloatIsText(t *testing.T) {
	rows := []report.Row{
		{Line: 2, Ref: "A", Amount: dec(t, "12345678901234567.89"), State: "REJECTED"},
		{Line: 3, Ref: "B", Amount: dec(t, "9999999999999.99"), State: "READY"},
	}
	p := writeRun(t, report.Summary{RunID: "r1"}, rows)
	f, err := excelize.OpenFile(p.XLSX)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if typ, _ := f.GetCellType(report.SheetRows, "F2"); typ != excelize.CellTypeInlineString {
		t.Errorf("F2 type %v, want text: a float cannot hold it", typ)
	}
	if v, _ := f.GetCellValue(report.SheetRows, "F2"); v != "12345678901234567.89" {
		t.Errorf("F2 = %q", v)
	}
	if v, _ := f.GetCellValue(report.SheetRows, "F3", excelize.Options{RawCellValue: true}); v != "9999999999999.99" {
		t.Errorf("F3 raw = %q, want the exact decimal", v)
	}
}

func TestSummarizeTiesOut(t *testing.T) {
	states := []string{"SUCCEEDED", "SUBMITTED", "SUBMITTING", "UNKNOWN", "READY", "FAILED", "REJECTED", "ODD", ""}
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 200 {
		n := rng.IntN(300)
		rows := make([]report.Row, n)
		want := decimal.Zero
		for i := range rows {
			rows[i] = report.Row{Line: i + 2, State: states[rng.IntN(len(states))],
				Amount: decimal.New(rng.Int64N(1_000_000_000_00), -2)}
			want = want.Add(rows[i].Amount)
		}
		s := report.Summarize(report.Summary{RunID: "x"}, rows)
		sum, count := decimal.Zero, 0
		for _, st := range s.ByState {
			sum = sum.Add(st.Amount)
			count += st.Count
		}
		if !sum.Equal(s.Total) || !s.Total.Equal(want) || count != n || s.Rows != n {
			t.Fatalf("iteration %d: by state %s (%d rows), total %s, rows sum %s (%d rows)", iter, sum, count, s.Total, want, n)
		}
		for i, name := range []string{"SUCCEEDED", "SUBMITTED", "SUBMITTING", "UNKNOWN", "READY", "FAILED", "REJECTED"} {
			if s.ByState[i].State != name {
				t.Fatalf("ByState[%d] = %s, want %s", i, s.ByState[i].State, name)
			}
		}
	}
}

func TestSummarizeOthersAfterFixedStates(t *testing.T) {
	rows := []report.Row{{State: "ZED", Amount: decimal.NewFromInt(1)}, {State: "ALPHA", Amount: decimal.NewFromInt(2)}}
	s := report.Summarize(report.Summary{}, rows)
	var got []string
	for _, st := range s.ByState {
		got = append(got, st.State)
	}
	want := []string{"SUCCEEDED", "SUBMITTED", "SUBMITTING", "UNKNOWN", "READY", "FAILED", "REJECTED", "ALPHA", "ZED"}
	if !slices.Equal(got, want) {
		t.Errorf("order = %q, want %q", got, want)
	}
}

func TestNeutralize(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"equals", "=1+1", "'=1+1"},
		{"plus", "+60123", "'+60123"},
		{"minus", "-2+3", "'-2+3"},
		{"at", "@SUM(1)", "'@SUM(1)"},
		{"tab", "\tx", "'\tx"},
		{"carriage return", "\rx", "'\rx"},
		{"line feed", "\nx", "'\nx"},
		{"after spaces", "  =cmd", "'  =cmd"},
		{"full-width equals", "＝1+1", "'＝1+1"},
		{"plain", "Aminah", "Aminah"},
		{"digits", "0012345678", "0012345678"},
		{"inner equals", "a=b", "a=b"},
		{"empty", "", ""},
		{"spaces only", "   ", "   "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := words.Neutralize(tt.in); got != tt.want {
				t.Errorf("words.Neutralize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestFormatMYR(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"thousands", "1250", "RM 1,250.00"},
		{"small", "0.5", "RM 0.50"},
		{"millions", "1234567.89", "RM 1,234,567.89"},
		{"exact hundreds", "100", "RM 100.00"},
		{"hundred thousand", "123456", "RM 123,456.00"},
		{"zero", "0", "RM 0.00"},
		{"three decimals kept", "1.234", "RM 1.234"},
		{"negative", "-1500.5", "RM -1,500.50"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := report.FormatMYR(dec(t, tt.in)); got != tt.want {
				t.Errorf("FormatMYR(%s) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestTemporaryFileRemovedOnError(t *testing.T) {
	dir := t.TempDir()
	// A directory where the CSV should go makes the rename fail.
	if err := os.Mkdir(filepath.Join(dir, "f.r1.result.csv"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := report.WriteRun(dir, "f.csv", report.Summary{RunID: "r1"}, sampleRows(t)); err == nil {
		t.Fatal("WriteRun succeeded over a directory")
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if strings.Contains(d.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func BenchmarkWriteRun(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		rows := make([]report.Row, n)
		for i := range rows {
			rows[i] = report.Row{Line: i + 2, Ref: "INV-" + itoa(i), Recipient: "Recipient " + itoa(i), ProviderID: 12,
				Bank: "Maybank", Account: "0012345678", Amount: decimal.New(int64(i%100000+1), -2), State: "SUCCEEDED",
				InvoiceNo: "PO-" + itoa(i), TransactionStatus: "SUCCESS"}
		}
		b.Run(itoa(n)+"rows", func(b *testing.B) {
			dir := b.TempDir()
			for b.Loop() {
				if _, err := report.WriteRun(dir, "bench.csv", report.Summary{RunID: "bench"}, rows); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
