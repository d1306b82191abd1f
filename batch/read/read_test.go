package read_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch/read"
	"github.com/shopspring/decimal"
	"github.com/xuri/excelize/v2"
)

var updateSample = flag.Bool("update-sample", false, "rewrite testdata/sample-payroll.xlsx from the CSV sample")

const inputDir = "../../testdata"

type inputResult struct {
	rows     []read.Row
	payments []read.Payment
	errs     []*read.RowError
}

// readAll reads and validates a file against the sandbox's providers.
func readInput(tb testing.TB, path string, ropts read.Options, vopts read.ValidateOptions) (inputResult, error) {
	tb.Helper()
	if vopts.Providers == nil {
		vopts.Providers = sandbox.DefaultProviders()
	}
	rd, err := read.OpenFile(path, ropts)
	if err != nil {
		return inputResult{}, err
	}
	defer rd.Close()
	v := read.NewValidator(vopts)
	var res inputResult
	for {
		row, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return res, err
		}
		res.rows = append(res.rows, row)
		p, errs := v.Check(row)
		if len(errs) == 0 {
			res.payments = append(res.payments, p)
		}
		res.errs = append(res.errs, errs...)
	}
	found := v.Finish()
	res.errs = append(res.errs, found.Duplicates...)
	res.errs = append(res.errs, found.File...)
	return res, nil
}

func writeInput(tb testing.TB, name, content string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// rawNumber is a number cell's value exactly as the sheet's XML stores it.
type rawNumber string

// writeInputXLSX writes a workbook whose first sheet holds rows as given (strings stay text, numbers
// are stored as numbers).
func writeInputXLSX(tb testing.TB, sheets map[string][][]any, order ...string) string {
	tb.Helper()
	f := excelize.NewFile()
	defer f.Close()
	for i, name := range order {
		if i == 0 {
			if err := f.SetSheetName("Sheet1", name); err != nil {
				tb.Fatal(err)
			}
		} else if _, err := f.NewSheet(name); err != nil {
			tb.Fatal(err)
		}
		for r, row := range sheets[name] {
			cell, _ := excelize.CoordinatesToCellName(1, r+1)
			plain := make([]any, len(row))
			copy(plain, row)
			for c, v := range row {
				if _, ok := v.(rawNumber); ok {
					plain[c] = nil
				}
			}
			if err := f.SetSheetRow(name, cell, &plain); err != nil {
				tb.Fatal(err)
			}
			for c, v := range row {
				if raw, ok := v.(rawNumber); ok {
					at, _ := excelize.CoordinatesToCellName(c+1, r+1)
					if err := f.SetCellDefault(name, at, string(raw)); err != nil {
						tb.Fatal(err)
					}
				}
			}
		}
	}
	path := filepath.Join(tb.TempDir(), "in.xlsx")
	if err := f.SaveAs(path); err != nil {
		tb.Fatal(err)
	}
	return path
}

func TestSampleCSVAndXLSXHoldTheSamePayouts(t *testing.T) {
	t.Parallel()
	csvRes, err := readInput(t, filepath.Join(inputDir, "sample-payroll.csv"), read.Options{}, read.ValidateOptions{DefaultDescription: "Salary"})
	if err != nil {
		t.Fatal(err)
	}
	if len(csvRes.errs) > 0 {
		t.Fatalf("sample CSV rejected: %v", csvRes.errs)
	}
	if len(csvRes.payments) != 50 {
		t.Fatalf("sample CSV: %d payments, want 50", len(csvRes.payments))
	}
	xlsxPath := filepath.Join(inputDir, "sample-payroll.xlsx")
	if *updateSample {
		writeSampleXLSX(t, xlsxPath, csvRes.payments)
	}
	xRes, err := readInput(t, xlsxPath, read.Options{}, read.ValidateOptions{DefaultDescription: "Salary"})
	if err != nil {
		t.Fatal(err)
	}
	if len(xRes.errs) > 0 {
		t.Fatalf("sample XLSX rejected: %v", xRes.errs)
	}
	if len(xRes.payments) != len(csvRes.payments) {
		t.Fatalf("XLSX %d payments, CSV %d", len(xRes.payments), len(csvRes.payments))
	}
	leadingZeros := 0
	for i, want := range csvRes.payments {
		got := xRes.payments[i]
		if got.Ref != want.Ref || got.Recipient != want.Recipient || got.ProviderID != want.ProviderID ||
			got.Account != want.Account || !got.Amount.Equal(want.Amount) || got.Description != want.Description || got.Line != want.Line {
			t.Errorf("row %d: XLSX %+v, CSV %+v", i, got, want)
		}
		if len(xRes.rows[i].Warnings) > 0 {
			t.Errorf("row %d: unexpected warnings %v", i, xRes.rows[i].Warnings)
		}
		if strings.HasSuffix(want.Account, "000") {
			t.Errorf("row %d: account %s ends in 000, which the sandbox fails", i, want.Account)
		}
		if strings.HasPrefix(want.Account, "0") {
			leadingZeros++
		}
		if want.Amount.Exponent() != -2 && !want.Amount.Equal(want.Amount.Round(2)) {
			t.Errorf("row %d: amount %s", i, want.Amount)
		}
	}
	if leadingZeros < 3 {
		t.Errorf("only %d sample accounts have leading zeros, want several", leadingZeros)
	}
}

// writeSampleXLSX writes the XLSX sample the way an accountant's workbook looks: account and
// reference columns as text, amounts as numbers.
func writeSampleXLSX(tb testing.TB, path string, payments []read.Payment) {
	tb.Helper()
	rows := make([][]any, len(payments))
	for i, p := range payments {
		amt, _ := p.Amount.Float64()
		desc := p.Description
		if desc == "Salary" {
			desc = ""
		}
		rows[i] = []any{p.Ref, p.Recipient, p.Bank, nil, p.Account, amt, desc}
	}
	data, err := read.TemplateWithRows(rows)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
}

func TestInvalidFilesAreRejectedWithTheirReasons(t *testing.T) {
	t.Parallel()
	type want struct {
		line   int
		column string
		err    error
	}
	tests := []struct {
		file    string
		fileErr error // the reader refuses the file
		rows    []want
	}{
		{file: "ref-missing.csv", rows: []want{{3, read.ColRef, read.ErrRefMissing}}},
		{file: "ref-duplicate.csv", rows: []want{{2, read.ColRef, read.ErrRefDuplicate}, {4, read.ColRef, read.ErrRefDuplicate}}},
		{file: "ref-format.csv", rows: []want{{2, read.ColRef, read.ErrRefFormat}}},
		{file: "bank-unknown.csv", rows: []want{{2, read.ColBank, read.ErrBankUnknown}}},
		{file: "account-scientific.csv", rows: []want{{2, read.ColAccount, read.ErrAccountScientific}}},
		{file: "account-format.csv", rows: []want{{2, read.ColAccount, read.ErrAccountFormat}, {3, read.ColAccount, read.ErrAccountFormat}}},
		{file: "amount-format.csv", rows: []want{{2, read.ColAmount, read.ErrAmountFormat}, {3, read.ColAmount, read.ErrAmountFormat}, {4, read.ColAmount, read.ErrAmountFormat}}},
		{file: "amount-not-positive.csv", rows: []want{{2, read.ColAmount, read.ErrAmountNotPositive}, {3, read.ColAmount, read.ErrAmountNotPositive}, {4, read.ColAmount, read.ErrAmountNotPositive}}},
		{file: "amount-precision.csv", rows: []want{{2, read.ColAmount, read.ErrAmountPrecision}}},
		{file: "recipient-missing.csv", rows: []want{{2, read.ColRecipient, read.ErrRecipientMissing}}},
		{file: "description-control.csv", rows: []want{{2, read.ColDescription, read.ErrDescription}}},
		{file: "no-rows.csv", rows: []want{{0, "", read.ErrNoRows}}},
		{file: "header-missing.csv", fileErr: read.ErrHeaderMissing},
		{file: "semicolons.csv", fileErr: read.ErrHeaderMissing},
		{file: "header-duplicate.csv", fileErr: read.ErrHeaderDuplicate},
		{file: "not-utf8.csv", fileErr: read.ErrNotUTF8},
		{file: "bare-quote.csv", fileErr: read.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			res, err := readInput(t, filepath.Join(inputDir, "invalid", tt.file), read.Options{}, read.ValidateOptions{})
			if tt.fileErr != nil {
				var inErr *read.InputError
				if !errors.Is(err, tt.fileErr) || !errors.As(err, &inErr) {
					t.Fatalf("err = %v, want an InputError for %v", err, tt.fileErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.errs) != len(tt.rows) {
				t.Fatalf("got %d errors %v, want %d", len(res.errs), res.errs, len(tt.rows))
			}
			for i, w := range tt.rows {
				got := res.errs[i]
				if got.Line != w.line || got.Column != w.column || !errors.Is(got, w.err) {
					t.Errorf("error %d = %v (line %d, column %q), want line %d %s: %v", i, got, got.Line, got.Column, w.line, w.column, w.err)
				}
			}
		})
	}
}

func TestInvalidFileMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want []string
	}{
		{"not-utf8.csv", []string{"line 3", "not UTF-8", "CSV UTF-8"}},
		{"header-missing.csv", []string{"recipient_reference", "third_party_account_no", "columns found: external_invoice_ref, recipient, bank, account, amount"}},
		{"ref-duplicate.csv", []string{"lines 2 and 4"}},
		{"semicolons.csv", []string{"separated by semicolons", "Comma delimited"}},
		{"bank-unknown.csv", []string{`"Maybank (Malayan Banking Berhad)"`}},
		{"account-scientific.csv", []string{"scientific notation", "text"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			res, err := readInput(t, filepath.Join(inputDir, "invalid", tt.file), read.Options{}, read.ValidateOptions{})
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			for _, e := range res.errs {
				msg += e.Error() + "\n"
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
		})
	}
}

func TestCSVReaderFormats(t *testing.T) {
	t.Parallel()
	const header = "External Invoice Ref,RECIPIENT-REFERENCE,bank,payout_service_id,Third Party Account No,amount,notes,payment_description\r\n"
	tests := []struct {
		name    string
		content string
		lines   []int
		refs    []string
		descs   []string
	}{
		{"bom and crlf", "\ufeff" + header + "A1,Tan,Maybank,,0123456789,10.00,x,Gaji\r\nA2,Lim,,2,0123456789,11.00,,\r\n", []int{2, 3}, []string{"A1", "A2"}, []string{"Gaji", ""}},
		{"lf and blank trailing lines", strings.ReplaceAll(header, "\r\n", "\n") + "A1,Tan,Maybank,,0123456789,10.00,,\n\n\n,,,,,,,\n", []int{2}, []string{"A1"}, []string{""}},
		{"quoted newline keeps physical lines", header + "A1,Tan,Maybank,,0123456789,10.00,,\"two\nlines\"\r\nA2,Lim,Maybank,,0123456789,\"1,250.00\",,\r\n", []int{2, 4}, []string{"A1", "A2"}, []string{"two\nlines", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rd, err := read.NewCSVReader(strings.NewReader(tt.content), "in.csv", read.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()
			var lines []int
			var refs, descs []string
			for {
				row, err := rd.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				lines, refs, descs = append(lines, row.Line), append(refs, row.Ref), append(descs, row.Description)
			}
			if !sameSlice(lines, tt.lines) || !sameSlice(refs, tt.refs) || !sameSlice(descs, tt.descs) {
				t.Errorf("lines %v refs %q descs %q, want %v %q %q", lines, refs, descs, tt.lines, tt.refs, tt.descs)
			}
		})
	}
}

func sameSlice[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReaderLimits(t *testing.T) {
	t.Parallel()
	const rows = "external_invoice_ref,recipient_reference,bank,third_party_account_no,amount\nA1,Tan,Maybank,0123456789,10\nA2,Tan,Maybank,0123456789,10\nA3,Tan,Maybank,0123456789,10\n"
	t.Run("too many rows", func(t *testing.T) {
		_, err := readInput(t, writeInput(t, "in.csv", rows), read.Options{MaxRows: 2}, read.ValidateOptions{})
		if !errors.Is(err, read.ErrTooManyRows) {
			t.Fatalf("err = %v, want ErrTooManyRows", err)
		}
	})
	t.Run("file too large", func(t *testing.T) {
		_, err := readInput(t, writeInput(t, "in.csv", rows), read.Options{MaxBytes: 50}, read.ValidateOptions{})
		if !errors.Is(err, read.ErrFileTooLarge) {
			t.Fatalf("err = %v, want ErrFileTooLarge", err)
		}
	})
	t.Run("stream too large", func(t *testing.T) {
		rd, err := read.NewCSVReader(strings.NewReader(rows), "in.csv", read.Options{MaxBytes: 120})
		if err != nil {
			t.Fatal(err)
		}
		for err == nil {
			_, err = rd.Next()
		}
		if !errors.Is(err, read.ErrFileTooLarge) {
			t.Fatalf("err = %v, want ErrFileTooLarge", err)
		}
	})
	t.Run("unsupported extension", func(t *testing.T) {
		_, err := readInput(t, writeInput(t, "in.txt", rows), read.Options{}, read.ValidateOptions{})
		if !errors.Is(err, read.ErrFileType) {
			t.Fatalf("err = %v, want ErrFileType", err)
		}
	})
	t.Run("upper-case extension", func(t *testing.T) {
		res, err := readInput(t, writeInput(t, "IN.CSV", rows), read.Options{}, read.ValidateOptions{})
		if err != nil || len(res.payments) != 3 {
			t.Fatalf("err = %v, %d payments", err, len(res.payments))
		}
	})
	t.Run("empty file", func(t *testing.T) {
		_, err := readInput(t, writeInput(t, "in.csv", ""), read.Options{}, read.ValidateOptions{})
		if !errors.Is(err, read.ErrHeaderMissing) {
			t.Fatalf("err = %v, want ErrHeaderMissing", err)
		}
	})
}

var inputXLSXHeader = []any{"External Invoice Ref", "Recipient Reference", "Bank", "Third Party Account No", "Amount", "Payment Description"}

func TestXLSXNumbersReadAsTheirDigits(t *testing.T) {
	t.Parallel()
	path := writeInputXLSX(t, map[string][][]any{"Pay": {
		inputXLSXHeader,
		{"A1", "Tan Wei Ming", "Maybank", "0123456789", rawNumber("1234.5600000000001"), "Gaji"},
		{"A2", "Lim Mei Ling", "CIMB Bank", rawNumber("1.23456789012E+11"), "RM 1,250.00", nil},
		{"A3", "Ng Siew Ling", "Public Bank", 1234567890123456789, 10.5, nil},
		{"A4", "Goh Boon Huat", "RHB Bank", "01-2345-6789", rawNumber("0.30000000000000004"), nil},
		{"A5", "Yap Kok Leong", "RHB Bank", "0123456789", rawNumber("10.125"), nil},
	}}, "Pay")
	res, err := readInput(t, path, read.Options{NumericAccounts: true}, read.ValidateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.rows) != 5 {
		t.Fatalf("%d rows, want 5", len(res.rows))
	}
	if len(res.payments) != 4 {
		t.Fatalf("payments %v, errors %v", res.payments, res.errs)
	}
	if got := res.payments[0]; got.Account != "0123456789" || !got.Amount.Equal(decimal.RequireFromString("1234.56")) || got.Line != 2 {
		t.Errorf("text account, float noise amount: %+v", got)
	}
	if got := res.payments[1]; got.Account != "123456789012" || !got.Amount.Equal(decimal.RequireFromString("1250")) {
		t.Errorf("number account: %+v", got)
	}
	if len(res.rows[0].Warnings) != 0 {
		t.Errorf("warnings on a text account: %v", res.rows[0].Warnings)
	}
	if w := res.rows[1].Warnings; len(w) != 1 || !strings.Contains(w[0], "stored as a number") {
		t.Errorf("account in E notation: warnings %v", w)
	}
	if w := res.rows[2].Warnings; len(w) != 1 || !strings.Contains(w[0], "stored as a number") {
		t.Errorf("19-digit number account: warnings %v", w)
	}
	if strings.ContainsAny(res.rows[2].Account, "Ee.") {
		t.Errorf("19-digit number account read as %q", res.rows[2].Account)
	}
	if got := res.payments[3]; !got.Amount.Equal(decimal.RequireFromString("0.3")) || got.Account != "0123456789" {
		t.Errorf("0.1+0.2 stored as a number: %+v", got)
	}
	if len(res.errs) != 1 || !errors.Is(res.errs[0], read.ErrAmountPrecision) || res.errs[0].Line != 6 {
		t.Errorf("10.125 stored as a number: errors %v, want precision on line 6", res.errs)
	}
}

func TestXLSXSheetSelection(t *testing.T) {
	t.Parallel()
	sheets := map[string][][]any{
		"Notes":   {{"nothing to pay here"}},
		"Payroll": {inputXLSXHeader, {"A1", "Tan Wei Ming", "Maybank", "0123456789", 10, nil}},
	}
	path := writeInputXLSX(t, sheets, "Payroll", "Notes")
	res, err := readInput(t, path, read.Options{}, read.ValidateOptions{})
	if err != nil || len(res.payments) != 1 {
		t.Fatalf("first sheet: err %v, payments %d", err, len(res.payments))
	}
	_, err = readInput(t, path, read.Options{Sheet: "Notes"}, read.ValidateOptions{})
	if !errors.Is(err, read.ErrHeaderMissing) {
		t.Errorf("sheet Notes: err = %v, want ErrHeaderMissing", err)
	}
	_, err = readInput(t, path, read.Options{Sheet: "Gaji"}, read.ValidateOptions{})
	if !errors.Is(err, read.ErrSheetNotFound) || !strings.Contains(err.Error(), "Payroll, Notes") {
		t.Errorf("missing sheet: err = %v, want ErrSheetNotFound listing the sheets", err)
	}
	_, err = readInput(t, path, read.Options{MaxRows: 0, MaxBytes: 100}, read.ValidateOptions{})
	if !errors.Is(err, read.ErrFileTooLarge) {
		t.Errorf("size cap: err = %v, want ErrFileTooLarge", err)
	}
}

// TestXLSXZipBombIsRefused rewrites a small workbook so that its sheet entry claims a huge
// uncompressed size: excelize's defaults run out of memory (6 GiB) or read zero rows (4 GiB).
func TestXLSXZipBombIsRefused(t *testing.T) {
	t.Parallel()
	src := writeInputXLSX(t, map[string][][]any{"Sheet1": {inputXLSXHeader, {"A1", "Tan Wei Ming", "Maybank", "0123456789", 10, nil}}}, "Sheet1")
	for _, claim := range []uint64{4 << 30, 6 << 30} {
		t.Run(decimal.NewFromInt(int64(claim>>30)).String()+"GiB", func(t *testing.T) {
			zr, err := zip.OpenReader(src)
			if err != nil {
				t.Fatal(err)
			}
			defer zr.Close()
			var buf bytes.Buffer
			zw := zip.NewWriter(&buf)
			for _, f := range zr.File {
				raw, err := f.OpenRaw()
				if err != nil {
					t.Fatal(err)
				}
				h := f.FileHeader
				if strings.HasPrefix(h.Name, "xl/worksheets/") {
					h.UncompressedSize64 = claim
				}
				w, err := zw.CreateRaw(&h)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := io.Copy(w, raw); err != nil {
					t.Fatal(err)
				}
			}
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			path := writeInput(t, "bomb.xlsx", buf.String())
			res, err := readInput(t, path, read.Options{}, read.ValidateOptions{})
			if err == nil {
				t.Fatalf("zip bomb read without error: %d rows, errors %v", len(res.rows), res.errs)
			}
			if !errors.Is(err, read.ErrXLSXSizeLimit) {
				t.Errorf("err = %v, want ErrXLSXSizeLimit", err)
			}
		})
	}
}

func TestTemplateReadsBackAsAnEmptyFile(t *testing.T) {
	t.Parallel()
	for _, ext := range []string{"csv", "xlsx"} {
		t.Run(ext, func(t *testing.T) {
			var buf bytes.Buffer
			if err := read.WriteTemplate(&buf, ext == "xlsx"); err != nil {
				t.Fatal(err)
			}
			if ext == "csv" && buf.String() != strings.Join(read.Columns, ",")+"\n" {
				t.Errorf("CSV template %q", buf.String())
			}
			res, err := readInput(t, writeInput(t, "template."+ext, buf.String()), read.Options{}, read.ValidateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.errs) != 1 || !errors.Is(res.errs[0], read.ErrNoRows) {
				t.Errorf("errors %v, want ErrNoRows", res.errs)
			}
		})
	}
}
