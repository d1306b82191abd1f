package read_test

import (
	"errors"
	"os"
	"strconv"
	"testing"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch/read"
	"github.com/xuri/excelize/v2"
)

// checked is what the reader and the validator make of one row of a file.
type checked struct {
	payment read.Payment
	errs    []*read.RowError
}

func checkFile(t *testing.T, name string, opts read.Options) map[int]checked {
	t.Helper()
	v := read.NewValidator(read.ValidateOptions{Providers: sandbox.DefaultProviders(), DefaultDescription: "Salary"})
	out := map[int]checked{}
	for _, row := range readAllRows(t, "../../testdata/libreoffice/"+name, opts) {
		p, errs := v.Check(row)
		out[row.Line] = checked{p, errs}
	}
	return out
}

// wantPaid fails unless line is a payment of amount to account.
func wantPaid(t *testing.T, got map[int]checked, line int, account, amount string) {
	t.Helper()
	c, ok := got[line]
	if !ok || len(c.errs) > 0 || c.payment.Account != account || c.payment.Amount.String() != amount {
		t.Errorf("line %d: %+v %v, want %s paid to %s", line, c.payment, c.errs, amount, account)
	}
}

// wantRejected fails unless line is rejected in column for err.
func wantRejected(t *testing.T, got map[int]checked, line int, column string, err error) {
	t.Helper()
	for _, e := range got[line].errs {
		if e.Column == column && errors.Is(e, err) && e.Line == line {
			return
		}
	}
	t.Errorf("line %d: %v, want %s rejected: %v", line, got[line].errs, column, err)
}

// Workbooks written by LibreOffice Calc 7.4 from the flat ODS in testdata/libreoffice/make.
func TestLibreOfficeWorkbooks(t *testing.T) {
	t.Parallel()
	t.Run("the active second sheet: hidden row, formulas, number account rejected", func(t *testing.T) {
		got := checkFile(t, "two-sheets.xlsx", read.Options{})
		if len(got) != 8 {
			t.Fatalf("%d rows, want the 8 of sheet November", len(got))
		}
		wantPaid(t, got, 2, "000181590832", "100")
		wantRejected(t, got, 3, read.ColAccount, read.ErrAccountNumber)
		wantRejected(t, got, 4, read.WholeRow, read.ErrHiddenRow)
		wantRejected(t, got, 5, read.ColAmount, read.ErrFormula)
		wantRejected(t, got, 6, read.ColAccount, read.ErrFormula)
		wantPaid(t, got, 7, "000181590832", "250.5")
		wantPaid(t, got, 8, "000181590832", "99.9")  // a currency-formatted number
		wantPaid(t, got, 9, "000181590832", "75.25") // text in a column formatted "@"
	})
	t.Run("--hidden-rows pays the hidden row", func(t *testing.T) {
		got := checkFile(t, "two-sheets.xlsx", read.Options{HiddenRows: true})
		wantPaid(t, got, 4, "000181590832", "100")
	})
	t.Run("a hidden sheet is read only when named", func(t *testing.T) {
		got := checkFile(t, "two-sheets.xlsx", read.Options{Sheet: "Secret"})
		if len(got) != 1 || got[2].payment.Ref != "PAY-950" {
			t.Fatalf("sheet Secret: %+v", got)
		}
	})
	t.Run("a boolean, a date or a percentage is not an amount", func(t *testing.T) {
		got := checkFile(t, "odd-types.xlsx", read.Options{NumericAccounts: true})
		wantPaid(t, got, 2, "000181590832", "100")
		wantRejected(t, got, 3, read.ColAmount, read.ErrCellBoolean) // TRUE, stored as 1
		wantRejected(t, got, 4, read.ColAmount, read.ErrCellDate)    // 2026-11-30, stored as 46356
		wantRejected(t, got, 5, read.ColAmount, read.ErrCellPercent) // 50.00%, stored as 0.5
		wantRejected(t, got, 6, read.ColAccount, read.ErrCellBoolean)
	})
	t.Run("cells typed in Calc", func(t *testing.T) {
		got := checkFile(t, "typed.xlsx", read.Options{})
		wantPaid(t, got, 2, "000181590832", "1250") // '000181590832 and 1,250.00
		wantRejected(t, got, 3, read.ColAccount, read.ErrAccountNumber)
		wantRejected(t, got, 4, read.ColAccount, read.ErrAccountNumber)
		wantPaid(t, got, 5, "000181590832", "300") // '300.00
		wantRejected(t, got, 6, read.ColAmount, read.ErrFormula)
		wantPaid(t, got, 7, "000181590832", "1500.5") // RM1,500.50 kept as text by Calc
	})
	t.Run("a note to the right of the table", func(t *testing.T) {
		got := checkFile(t, "note-beyond-header.xlsx", read.Options{})
		wantRejected(t, got, 3, read.WholeRow, read.ErrFieldCount)
	})
}

// The fixtures stay small enough to keep in the repository.
func TestLibreOfficeFixturesAreSmall(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir("../../testdata/libreoffice")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if info, err := e.Info(); err != nil || info.Size() > 50<<10 {
			t.Errorf("%s: %v, size over 50 KiB", e.Name(), err)
		}
	}
}

// Excel's own number formats: built-in ids (14 a date, 9 a percentage) and custom codes. A
// currency or a quoted word holding d, m, y, h or s is still an amount.
func TestXLSXAmountFormats(t *testing.T) {
	t.Parallel()
	formats := []struct {
		builtin int
		custom  string
		err     error
	}{
		{builtin: 14, err: read.ErrCellDate},
		{builtin: 22, err: read.ErrCellDate},
		{builtin: 9, err: read.ErrCellPercent},
		{custom: "dd/mm/yyyy", err: read.ErrCellDate},
		{custom: "[h]:mm", err: read.ErrCellDate},
		{custom: "0.0%", err: read.ErrCellPercent},
		{builtin: 4},
		{custom: `[$RM-43E] #,##0.00`},
		{custom: `#,##0.00 "ringgit"`},
		{custom: `[Red]#,##0.00;\-#,##0.00`},
		{custom: "General"},
		{custom: "Standard"},
		{custom: `[$-409]d-mmm-yy`, err: read.ErrCellDate},
	}
	path := buildXLSX(t, func(f *excelize.File) {
		must(t, f.SetSheetRow("Sheet1", "A1", &[]any{"external_invoice_ref", "recipient_reference", "bank", "third_party_account_no", "amount"}))
		for i, format := range formats {
			line := i + 2
			must(t, f.SetSheetRow("Sheet1", "A"+strconv.Itoa(line), &[]any{"PAY-" + strconv.Itoa(line), "Ali", "Maybank", "000181590832", 1250.5}))
			style := &excelize.Style{NumFmt: format.builtin}
			if format.custom != "" {
				style = &excelize.Style{CustomNumFmt: &format.custom}
			}
			id, err := f.NewStyle(style)
			must(t, err)
			must(t, f.SetCellStyle("Sheet1", "E"+strconv.Itoa(line), "E"+strconv.Itoa(line), id))
		}
	}, nil)
	rows := readAllRows(t, path, read.Options{})
	if len(rows) != len(formats) {
		t.Fatalf("%d rows, want %d", len(rows), len(formats))
	}
	for i, format := range formats {
		row := rows[i]
		if format.err == nil {
			if len(row.Problems) > 0 || row.Amount != "1250.5" {
				t.Errorf("format %d %q: amount %q, problems %v; want it paid", format.builtin, format.custom, row.Amount, row.Problems)
			}
			continue
		}
		if len(row.Problems) != 1 || row.Problems[0].Column != read.ColAmount || !errors.Is(row.Problems[0], format.err) {
			t.Errorf("format %d %q: problems %v, want the amount rejected: %v", format.builtin, format.custom, row.Problems, format.err)
		}
	}
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// An Excel 97-2003 workbook saved by Calc is told apart under any name.
func TestLibreOfficeExcel97(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../testdata/libreoffice/excel97.xls")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"payroll.xls", "payroll.xlsx", "payroll.csv"} {
		_, err := read.OpenFile(writeInput(t, name, string(data)), read.Options{})
		if !errors.Is(err, read.ErrOldExcel) {
			t.Errorf("%s: err %v, want %v", name, err, read.ErrOldExcel)
		}
	}
}
