package read_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payout/payout/batch/read"
	"github.com/xuri/excelize/v2"
)

const sixColumns = "external_invoice_ref,recipient_reference,bank,third_party_account_no,amount,payment_description\n"

// rowErrors is every rejection of a file's rows, the file read as a run reads it.
func rowErrors(tb testing.TB, path string, ropts read.Options) ([]*read.RowError, inputResult) {
	tb.Helper()
	res, err := readInput(tb, path, ropts, read.ValidateOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return res.errs, res
}

func TestCSVRowWhoseFieldsDoNotLineUpIsRejected(t *testing.T) {
	t.Parallel()
	path := writeInput(t, "in.csv", sixColumns+
		"E-010,Lim,Maybank,000112233440,100.00,Nov\n"+
		"E-011,Tan,Maybank,000112233445,1,200.50,Nov\n"+ // an unquoted thousands separator
		"E-012,Tan, Ah Kow,Maybank,000112233446,50.00,Nov\n"+ // an unquoted comma in a name
		"E-013,Ong,Maybank,000112233447,75.00\n"+ // one field short
		"E-014,Goh,Maybank,000112233448,80.00,,\n") // one empty field too many: a shift leaves the same
	errs, res := rowErrors(t, path, read.Options{})
	if len(res.payments) != 1 || res.payments[0].Ref != "E-010" {
		t.Fatalf("payments %+v, want only E-010", res.payments)
	}
	want := map[int]string{3: "has 7 fields, the header has 6: an unquoted comma? quote the value or drop the thousands separator",
		4: "has 7 fields, the header has 6", 5: "has 5 fields, the header has 6: a missing comma?", 6: "has 7 fields, the header has 6"}
	if len(errs) != len(want) {
		t.Fatalf("errors %v, want one per shifted row (no noise from shifted values)", errs)
	}
	for _, e := range errs {
		if !errors.Is(e, read.ErrFieldCount) || !strings.Contains(e.Error(), want[e.Line]) || !strings.HasPrefix(e.Error(), "line ") {
			t.Errorf("line %d: %v, want %q", e.Line, e, want[e.Line])
		}
	}
}

func TestCSVTrailingEmptyFieldsOfExcelAreFine(t *testing.T) {
	t.Parallel()
	path := writeInput(t, "in.csv", strings.TrimSuffix(sixColumns, "\n")+",,\n"+
		"E-010,Lim,Maybank,000112233440,100.00,Nov,,\n"+
		"E-011,Tan,Maybank,000112233445,200.50,,,\n"+
		",,,,,,,\n")
	errs, res := rowErrors(t, path, read.Options{})
	if len(errs) != 0 || len(res.payments) != 2 {
		t.Fatalf("errors %v, payments %d; want 2 payments", errs, len(res.payments))
	}
}

// endless is a stream of one byte that never ends: a reader that read it all would never return.
type endless struct {
	prefix string
	fill   byte
}

func (e *endless) Read(p []byte) (int, error) {
	n := copy(p, e.prefix)
	e.prefix = e.prefix[n:]
	for i := n; i < len(p); i++ {
		p[i] = e.fill
	}
	return len(p), nil
}

func TestCSVLongLineIsRefusedWithoutReadingIt(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		stream io.Reader
		line   int
		reason string
	}{
		{"one endless line", &endless{prefix: sixColumns + "E-1,Tan,Maybank,0123456789,10,", fill: 'x'}, 2, "is this a payroll file"},
		{"an unclosed quote", &endless{prefix: sixColumns + "E-1,Tan,Maybank,0123456789,10,\"a\nb\"\nE-2,Tan,Maybank,0123456789,10,\"abc\n", fill: '\n'}, 4, "not closed"},
		{"an endless header", &endless{fill: 'x'}, 1, "is this a payroll file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rd, err := read.NewCSVReader(tt.stream, "in.csv", read.Options{})
			for err == nil {
				_, err = rd.Next()
			}
			var in *read.InputError
			if !errors.Is(err, read.ErrRecordTooLong) || !errors.As(err, &in) || !strings.Contains(err.Error(), tt.reason) {
				t.Fatalf("err = %v, want an InputError for ErrRecordTooLong saying %q", err, tt.reason)
			}
			if tt.line > 0 && in.Line != tt.line {
				t.Errorf("line %d, want %d", in.Line, tt.line)
			}
		})
	}
}

func TestLongValuesAreRejectedAndOnlyAnExcerptKept(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("Tan", 20000)
	path := writeInput(t, "in.csv", sixColumns+
		"E-1,"+huge+",Maybank,0123456789,10.00,Nov\n"+
		"E-2,Lim,Maybank,0123456789,"+strings.Repeat("1", 30)+",Nov\n"+
		"E-3,Lim,"+strings.Repeat("May", 40)+",0123456789,10.00,Nov\n"+
		"E-4,Lim,Maybank,"+strings.Repeat("1", 35)+",10.00,Nov\n"+
		strings.Repeat("R", 65)+",Lim,Maybank,0123456789,10.00,Nov\n")
	errs, res := rowErrors(t, path, read.Options{})
	want := []struct {
		line   int
		column string
		chars  string
	}{{2, read.ColRecipient, "(60000 chars)"}, {3, read.ColAmount, "30 characters, at most 20"},
		{4, read.ColBank, "120 characters, at most 100"}, {5, read.ColAccount, "35 characters, at most 34"}, {6, read.ColRef, "65 characters, at most 64"}}
	if len(errs) != len(want) {
		t.Fatalf("errors %v, want %d", errs, len(want))
	}
	for i, w := range want {
		e := errs[i]
		if e.Line != w.line || e.Column != w.column || !errors.Is(e, read.ErrTooLong) || !strings.Contains(e.Error(), w.chars) {
			t.Errorf("error %d = %v, want line %d %s too long, %q", i, e, w.line, w.column, w.chars)
		}
		if len(e.Error()) > 200 {
			t.Errorf("line %d: message of %d bytes: %.80s...", e.Line, len(e.Error()), e.Error())
		}
	}
	if got := res.rows[0].Recipient; got != strings.Repeat("Tan", 13)+"T…(60000 chars)" {
		t.Errorf("recipient kept as %q, want a 40-character excerpt and the length", got)
	}
}

func TestWorkbookNamedCSVIsToldApart(t *testing.T) {
	t.Parallel()
	xlsx := writeInputXLSX(t, map[string][][]any{"Sheet1": {inputXLSXHeader}}, "Sheet1")
	data, err := os.ReadFile(xlsx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = readInput(t, writeInput(t, "payroll.csv", string(data)), read.Options{}, read.ValidateOptions{})
	if !errors.Is(err, read.ErrNotCSV) || !strings.Contains(err.Error(), "payroll.csv: this is an Excel workbook, not a CSV: rename it .xlsx or save it as CSV UTF-8") {
		t.Fatalf("err = %v, want ErrNotCSV", err)
	}
}

func TestEncryptedAndOldWorkbooksAreToldApart(t *testing.T) {
	t.Parallel()
	f := excelize.NewFile()
	if err := f.SetSheetRow("Sheet1", "A1", &inputXLSXHeader); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	encrypted := filepath.Join(dir, "locked.xlsx")
	if err := f.SaveAs(encrypted, excelize.Options{Password: "secret"}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	data, err := os.ReadFile(encrypted)
	if err != nil {
		t.Fatal(err)
	}
	// An Excel 97-2003 file is an OLE2 container whose main stream is "Workbook".
	old := append([]byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"), make([]byte, 1000)...)
	old = append(old, []byte("W\x00o\x00r\x00k\x00b\x00o\x00o\x00k\x00")...)
	for _, tt := range []struct {
		name string
		data []byte
		want error
		msg  string
	}{
		{"locked.xlsx", data, read.ErrEncrypted, "locked.xlsx: the workbook is password-protected (encrypted): save a copy without a password"},
		{"locked.csv", data, read.ErrEncrypted, "password-protected"},
		{"old.xlsx", old, read.ErrOldExcel, "old.xlsx: this is an old Excel 97-2003 workbook (.xls): save it as an Excel Workbook (.xlsx) or as CSV UTF-8"},
		{"old.csv", old, read.ErrOldExcel, "97-2003"},
		{"old.xls", old, read.ErrOldExcel, "97-2003"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readInput(t, writeInput(t, tt.name, string(tt.data)), read.Options{}, read.ValidateOptions{})
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want %v saying %q", err, tt.want, tt.msg)
			}
		})
	}
}
