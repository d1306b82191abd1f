package read_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/payout/payout/batch/read"
)

// A payout column hidden behind a visible decoy, or too narrow to read, refuses the workbook,
// naming the sheet, the column and its header cell; a hidden column of notes does not.
func TestXLSXHiddenPayoutColumnIsRefused(t *testing.T) {
	t.Parallel()
	header := append(append([]any{}, inputXLSXHeader...), "Account (for checking)", "Notes")
	rows := [][]any{header, {"C-1", "Tan Wei Ming", "Maybank", "0123456789", 100, "Gaji", "0987654321", "ok"}}
	for _, tc := range []struct {
		name   string
		column string
		hide   func(f *excelize.File) error
		want   string
	}{
		{"account hidden behind a decoy", "D", func(f *excelize.File) error { return f.SetColVisible("Pay", "D", false) },
			`sheet "Pay", column D (third_party_account_no, headed in cell D1) is hidden or too narrow to read`},
		{"amount too narrow to read", "E", func(f *excelize.File) error { return f.SetColWidth("Pay", "E", "E", 0.2) },
			`sheet "Pay", column E (amount, headed in cell E1)`},
		{"reference in a hidden range", "A", func(f *excelize.File) error { return f.SetColVisible("Pay", "A:B", false) },
			`column A (external_invoice_ref, headed in cell A1)`},
		{"bank hidden", "C", func(f *excelize.File) error { return f.SetColVisible("Pay", "C", false) }, `column C (bank, headed in cell C1)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := buildXLSX(t, func(f *excelize.File) {
				if err := f.SetSheetName("Sheet1", "Pay"); err != nil {
					t.Fatal(err)
				}
				setRows(t, f, "Pay", rows)
				if err := tc.hide(f); err != nil {
					t.Fatal(err)
				}
			}, nil)
			rd, err := read.OpenFile(path, read.Options{})
			if err == nil {
				rd.Close()
			}
			if !errors.Is(err, read.ErrHiddenColumn) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "Unhide") {
				t.Errorf("open: %v; want it refused saying %q and what to do", err, tc.want)
			}
		})
	}
	path := buildXLSX(t, func(f *excelize.File) {
		setRows(t, f, "Sheet1", rows)
		if err := f.SetColVisible("Sheet1", "G:H", false); err != nil {
			t.Fatal(err)
		}
	}, nil)
	res, err := readInput(t, path, read.Options{}, read.ValidateOptions{})
	if err != nil || len(res.payments) != 1 || len(res.errs) != 0 {
		t.Fatalf("hidden columns of notes: %v, %d payments, %v; want the row paid", err, len(res.payments), res.errs)
	}
}

// A money or account cell whose number format shows another value than it holds (a literal
// "100.00" over 9000, an account padded with zeros it does not hold, a format that shows a
// text cell as fixed text) is rejected naming the sheet and cell; faithful formats pass, and
// hidden rows and formulas are still refused as before.
func TestXLSXLyingNumberFormatIsRejected(t *testing.T) {
	t.Parallel()
	path := buildXLSX(t, func(f *excelize.File) {
		setRows(t, f, "Sheet1", [][]any{inputXLSXHeader,
			{"L-1", "Tan Wei Ming", "Maybank", "0123456789", 9000, "Gaji"},
			{"L-2", "Lim Mei Ling", "Maybank", 181590832, 20, "Gaji"},
			{"L-3", "Ng Siew Ling", "Maybank", "0123456789", "9000", "Gaji"},
			{"L-4", "Goh Boon Huat", "Maybank", "0123456789", 1250.5, "Gaji"},
			{"L-5", "Wong Ah Kow", "Maybank", "0123456789", 30, "Gaji"},
			{"L-6", "Lee Chong Wei", "Maybank", "0123456789", 40, "Gaji"},
		})
		style := func(format string) int {
			s, err := f.NewStyle(&excelize.Style{CustomNumFmt: &format})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		for cell, format := range map[string]string{"E2": `"100.00"`, "D3": "000000000000", "E4": `0.00;0.00;0.00;"100.00"`, "E5": `"RM "#,##0.00`} {
			if err := f.SetCellStyle("Sheet1", cell, cell, style(format)); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.SetCellFormula("Sheet1", "E6", "10+20"); err != nil {
			t.Fatal(err)
		}
		if err := f.SetRowVisible("Sheet1", 7, false); err != nil {
			t.Fatal(err)
		}
	}, func(part string, xml []byte) []byte {
		if part != "xl/worksheets/sheet1.xml" {
			return xml
		}
		return cacheFormula(t, xml, "E6", "", "30")
	})
	res, err := readInput(t, path, read.Options{}, read.ValidateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := problemsByLine(res.errs)
	want := map[int]string{
		2: `amount: the cell's number format shows another value than the cell holds: cell E2 of sheet "Sheet1" holds 9000, but its format "\"100.00\"" adds digits of its own to the number: format the cell as Number with 2 decimals (or General)`,
		3: `third_party_account_no: the cell's number format shows another value than the cell holds: cell D3 of sheet "Sheet1" holds 181590832, but its format "000000000000" adds leading zeros the cell does not hold: format the column as Text`,
		4: `amount: the cell's number format shows another value than the cell holds: cell E4 of sheet "Sheet1" holds 9000, but its format "0.00;0.00;0.00;\"100.00\"" shows fixed text`,
		6: "amount: cell holds a formula",
		7: "(whole row): row is hidden in the workbook",
	}
	for line, w := range want {
		if len(got[line]) != 1 || !strings.HasPrefix(got[line][0], w) {
			t.Errorf("line %d: %q, want %q", line, got[line], w)
		}
	}
	if len(res.payments) != 1 || res.payments[0].Ref != "L-4" {
		t.Errorf("payments %+v, want only L-4, whose format shows its amount", res.payments)
	}
	for _, e := range res.errs {
		if e.Line == 2 && !errors.Is(e, read.ErrCellFormat) {
			t.Errorf("line 2: %v is not ErrCellFormat", e)
		}
	}
}
