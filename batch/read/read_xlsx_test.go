package read_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/payout/payout/batch/read"
	"github.com/xuri/excelize/v2"
)

// buildXLSX writes a workbook made by build into a temporary file; patch, when not nil, then
// rewrites the XML of its parts, for what excelize does not write (a formula's cached value).
func buildXLSX(tb testing.TB, build func(f *excelize.File), patch func(part string, xml []byte) []byte) string {
	tb.Helper()
	f := excelize.NewFile()
	defer f.Close()
	build(f)
	path := filepath.Join(tb.TempDir(), "in.xlsx")
	if err := f.SaveAs(path); err != nil {
		tb.Fatal(err)
	}
	if patch == nil {
		return path
	}
	zr, err := zip.OpenReader(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer zr.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, zf := range zr.File {
		rc, err := zf.Open()
		if err != nil {
			tb.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			tb.Fatal(err)
		}
		w, err := zw.Create(zf.Name)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write(patch(zf.Name, data)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

func setRows(tb testing.TB, f *excelize.File, sheet string, rows [][]any) {
	tb.Helper()
	for i, row := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetSheetRow(sheet, cell, &row); err != nil {
			tb.Fatal(err)
		}
	}
}

// problemsByLine is each line's rejections as "column: reason".
func problemsByLine(errs []*read.RowError) map[int][]string {
	out := make(map[int][]string)
	for _, e := range errs {
		out[e.Line] = append(out[e.Line], e.Column+": "+e.Err.Error())
	}
	return out
}

func TestXLSXFormulasInMoneyColumnsAreRejected(t *testing.T) {
	t.Parallel()
	header := append(append([]any{}, inputXLSXHeader...), "Base", "Bonus")
	path := buildXLSX(t, func(f *excelize.File) {
		setRows(t, f, "Sheet1", [][]any{header,
			{"F-1", "Tan Wei Ming", "Maybank", "0123456789", nil, "Gaji", 250, 500},
			{"F-2", "Lim Mei Ling", "Maybank", nil, 10, "Gaji"},
			{nil, "Ng Siew Ling", "Maybank", "0123456789", 10, "Gaji"},
			{"F-4", nil, "Maybank", "0123456789", 10, "Gaji"},
			{},
		})
		for cell, formula := range map[string]string{"E2": "G2+H2", "D3": `"0"&"123456789"`, "A4": `"F-"&"3"`,
			"B5": `"Goh "&"Boon Huat"`, "A6": `"F-"&"6"`, "E6": "1+1"} {
			if err := f.SetCellFormula("Sheet1", cell, formula); err != nil {
				t.Fatal(err)
			}
		}
	}, func(part string, xml []byte) []byte {
		if part != "xl/worksheets/sheet1.xml" {
			return xml
		}
		// Cached values as a spreadsheet saves them: E2's is stale (G2+H2 is 750 now).
		xml = cacheFormula(t, xml, "E2", "", "100")
		xml = cacheFormula(t, xml, "A4", "str", "F-3")
		return cacheFormula(t, xml, "B5", "str", "Goh Boon Huat")
	})
	res, err := readInput(t, path, read.Options{}, read.ValidateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.payments) != 1 || res.payments[0].Ref != "F-4" || res.payments[0].Recipient != "Goh Boon Huat" {
		t.Fatalf("payments %+v, want only F-4 (a formula in the recipient is paid at its value); errors %v", res.payments, res.errs)
	}
	got := problemsByLine(res.errs)
	want := map[int]string{
		2: "amount: cell holds a formula: type the value, not a formula (copy the column and paste it as values)",
		3: "third_party_account_no: cell holds a formula: type the value, not a formula (copy the column and paste it as values); it has no saved value",
		4: "external_invoice_ref: cell holds a formula",
		6: "external_invoice_ref: cell holds a formula",
	}
	for line, w := range want {
		if len(got[line]) == 0 || !strings.HasPrefix(got[line][0], w) {
			t.Errorf("line %d: %q, want %q", line, got[line], w)
		}
	}
	if len(got[6]) < 2 || !strings.Contains(got[6][1], "amount: cell holds a formula") {
		t.Errorf("line 6, only formulas with no saved value: %q, want the ref and the amount rejected, not a blank row", got[6])
	}
	for _, e := range res.errs {
		if e.Line == 2 && e.Value != "100" {
			t.Errorf("line 2 shows value %q, want the cached 100", e.Value)
		}
	}
}

// cacheFormula gives the formula cell of a sheet's XML a cached value, of type typ ("" for a number).
func cacheFormula(tb testing.TB, xml []byte, cell, typ, value string) []byte {
	tb.Helper()
	start := bytes.Index(xml, []byte(`<c r="`+cell+`"`))
	end := start + bytes.Index(xml[start:], []byte("</c>"))
	if start < 0 || end < start {
		tb.Fatalf("no cell %s in %s", cell, xml)
	}
	f := xml[start:end]
	f = f[bytes.Index(f, []byte("<f>")):]
	attrs := ""
	if typ != "" {
		attrs = ` t="` + typ + `"`
	}
	out := append([]byte{}, xml[:start]...)
	out = append(out, `<c r="`+cell+`"`+attrs+`>`...)
	out = append(out, f...)
	out = append(out, "<v>"+value+"</v>"...)
	return append(out, xml[end:]...)
}

func TestXLSXActiveAndHiddenSheets(t *testing.T) {
	t.Parallel()
	oldRows := [][]any{inputXLSXHeader, {"OLD-1", "Tan Wei Ming", "Maybank", "0123456789", 999, nil}}
	payRows := [][]any{inputXLSXHeader, {"PAY-1", "Lim Mei Ling", "Maybank", "0123456789", 10, nil}}
	build := func(state string) func(f *excelize.File) {
		return func(f *excelize.File) {
			if err := f.SetSheetName("Sheet1", "Old"); err != nil {
				t.Fatal(err)
			}
			i, err := f.NewSheet("Payroll")
			if err != nil {
				t.Fatal(err)
			}
			setRows(t, f, "Old", oldRows)
			setRows(t, f, "Payroll", payRows)
			f.SetActiveSheet(i)
			if state != "" {
				if err := f.SetSheetVisible("Old", false, state == "veryHidden"); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, state := range []string{"", "hidden", "veryHidden"} {
		t.Run("first sheet "+state, func(t *testing.T) {
			path := buildXLSX(t, build(state), nil)
			res, err := readInput(t, path, read.Options{}, read.ValidateOptions{})
			if err != nil || len(res.payments) != 1 || res.payments[0].Ref != "PAY-1" {
				t.Fatalf("err %v, payments %+v; want the active sheet Payroll", err, res.payments)
			}
			res, err = readInput(t, path, read.Options{Sheet: "Old"}, read.ValidateOptions{})
			if err != nil || len(res.payments) != 1 || res.payments[0].Ref != "OLD-1" {
				t.Fatalf("--sheet Old: err %v, payments %+v; a sheet named is read, hidden or not", err, res.payments)
			}
		})
	}
	t.Run("the active sheet hidden", func(t *testing.T) {
		path := buildXLSX(t, build("hidden"), func(part string, xml []byte) []byte {
			if part == "xl/workbook.xml" {
				return bytes.Replace(xml, []byte(`activeTab="1"`), []byte(`activeTab="0"`), 1)
			}
			return xml
		})
		_, err := readInput(t, path, read.Options{}, read.ValidateOptions{})
		if !errors.Is(err, read.ErrHiddenSheet) || !strings.Contains(err.Error(), `the active sheet is hidden: "Old"; name the sheet to pay with --sheet (sheets: Old, Payroll)`) {
			t.Fatalf("err = %v, want ErrHiddenSheet", err)
		}
	})
}

func TestXLSXHiddenRowsAreRejected(t *testing.T) {
	t.Parallel()
	path := buildXLSX(t, func(f *excelize.File) {
		setRows(t, f, "Sheet1", [][]any{inputXLSXHeader,
			{"H-1", "Tan Wei Ming", "Maybank", "0123456789", 10, nil},
			{"H-2", "Lim Mei Ling", "Maybank", "0123456789", 20, nil},
			{"H-3", "Ng Siew Ling", "Maybank", "0123456789", 30, nil},
			{}, {},
			{"H-6", "Goh Boon Huat", "Maybank", "0123456789", 60, nil},
		})
		for _, row := range []int{3, 7} {
			if err := f.SetRowVisible("Sheet1", row, false); err != nil {
				t.Fatal(err)
			}
		}
	}, func(part string, xml []byte) []byte {
		// Row 7 is hidden after a gap, and written with single quotes.
		if part == "xl/worksheets/sheet1.xml" && !bytes.Contains(xml, []byte(`<row r="7" hidden="true">`)) {
			t.Fatalf("row 7 not as expected: %s", xml)
		}
		return bytes.Replace(xml, []byte(`<row r="7" hidden="true">`), []byte(`<row r='7' hidden='1'>`), 1)
	})
	res, err := readInput(t, path, read.Options{}, read.ValidateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.payments) != 2 || len(res.errs) != 2 || res.errs[0].Line != 3 || !errors.Is(res.errs[0], read.ErrHiddenRow) ||
		res.errs[1].Line != 7 || !errors.Is(res.errs[1], read.ErrHiddenRow) ||
		!strings.Contains(res.errs[0].Error(), "line 3: row is hidden in the workbook: unhide it and check it, delete it, or pass --hidden-rows") {
		t.Fatalf("payments %d, errors %v; want line 3 rejected as hidden", len(res.payments), res.errs)
	}
	res, err = readInput(t, path, read.Options{HiddenRows: true}, read.ValidateOptions{})
	if err != nil || len(res.payments) != 4 || len(res.errs) != 0 {
		t.Fatalf("HiddenRows: err %v, payments %d, errors %v; want all four", err, len(res.payments), res.errs)
	}
}

func TestXLSXValueBeyondTheHeaderIsRejected(t *testing.T) {
	t.Parallel()
	path := buildXLSX(t, func(f *excelize.File) {
		setRows(t, f, "Sheet1", [][]any{inputXLSXHeader,
			{"B-1", "Tan Wei Ming", "Maybank", "0123456789", 1, "Gaji", nil, "200.50"},
			{"B-2", "Lim Mei Ling", "Maybank", "0123456789", 20, nil, " "},
		})
	}, nil)
	res, err := readInput(t, path, read.Options{}, read.ValidateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.payments) != 1 || len(res.errs) != 1 || res.errs[0].Line != 2 || !errors.Is(res.errs[0], read.ErrFieldCount) ||
		!strings.Contains(res.errs[0].Error(), `cell H2 holds "200.50", beyond the header's last column F`) {
		t.Fatalf("payments %d, errors %v; want line 2 rejected for H2", len(res.payments), res.errs)
	}
}

func TestXLSXAccountStoredAsNumberIsRejected(t *testing.T) {
	t.Parallel()
	rows := [][]any{inputXLSXHeader}
	for i := 0; i < 30; i++ {
		rows = append(rows, []any{"N-" + strconv.Itoa(i), "Tan Wei Ming", "Maybank", rawNumber("123456789"), 10, nil})
	}
	path := writeInputXLSX(t, map[string][][]any{"Sheet1": rows}, "Sheet1")
	res, err := readInput(t, path, read.Options{}, read.ValidateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.payments) != 0 || len(res.errs) != 30 || !errors.Is(res.errs[0], read.ErrAccountNumber) ||
		!strings.Contains(res.errs[0].Error(), "store the account column as text") {
		t.Fatalf("payments %d, errors %d (%v); want all 30 rejected", len(res.payments), len(res.errs), res.errs[:min(len(res.errs), 1)])
	}
	res, err = readInput(t, path, read.Options{NumericAccounts: true}, read.ValidateOptions{})
	if err != nil || len(res.payments) != 30 || len(res.rows[0].Warnings) != 1 {
		t.Fatalf("NumericAccounts: err %v, payments %d, warnings %v", err, len(res.payments), res.rows[0].Warnings)
	}
}

func TestXLSXCellTooLongIsRefusedBeforeItIsRead(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("x", 1<<20)
	build := func(f *excelize.File) {
		setRows(t, f, "Sheet1", [][]any{inputXLSXHeader, {"L-1", "MARKER", "Maybank", "0123456789", 10, nil}})
	}
	t.Run("shared string", func(t *testing.T) {
		path := buildXLSX(t, build, func(part string, xml []byte) []byte {
			return bytes.Replace(xml, []byte("MARKER"), []byte(huge), 1)
		})
		_, err := readInput(t, path, read.Options{}, read.ValidateOptions{})
		var in *read.InputError
		if !errors.Is(err, read.ErrCellTooLong) || !errors.As(err, &in) {
			t.Fatalf("err = %v, want an InputError for ErrCellTooLong", err)
		}
	})
	t.Run("inline string", func(t *testing.T) {
		path := buildXLSX(t, build, func(part string, xml []byte) []byte {
			if part != "xl/worksheets/sheet1.xml" {
				return xml
			}
			i := bytes.Index(xml, []byte(`<c r="B2" t="s">`))
			j := i + bytes.Index(xml[i:], []byte("</c>"))
			return append(append(append([]byte{}, xml[:i]...), []byte(`<c r="B2" t="inlineStr"><is><t>`+huge+`</t></is>`)...), xml[j:]...)
		})
		_, err := readInput(t, path, read.Options{}, read.ValidateOptions{})
		var in *read.InputError
		if !errors.Is(err, read.ErrCellTooLong) || !errors.As(err, &in) || in.Line != 2 {
			t.Fatalf("err = %v, want an InputError for ErrCellTooLong on line 2", err)
		}
	})
}
