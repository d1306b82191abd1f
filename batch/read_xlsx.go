package batch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
	"github.com/xuri/excelize/v2"
)

// Caps for unzipping an XLSX. With excelize's defaults (16 GiB) a 6 KB file claiming a 6 GiB
// entry kills the process with an out-of-memory error recover cannot catch.
const (
	xlsxUnzipSizeLimit    = 256 << 20
	xlsxUnzipXMLSizeLimit = 16 << 20 // excelize's default: a larger sheet spills to a temp file
)

// ErrXLSXSizeLimit is an XLSX whose entries claim more than the unzip caps: a zip bomb or a
// workbook too large to pay from.
var ErrXLSXSizeLimit = errors.New("workbook unzips beyond the size limit (256 MiB): not read")

// WarnAccountNumber flags an account cell stored as a number.
const WarnAccountNumber = "account stored as a number: leading zeros or digits may have been lost; store account numbers as text"

// WarnAccountUnchecked flags rows of a workbook whose cell types could not be read.
const WarnAccountUnchecked = "could not check whether the account cell is text: make sure the account column is formatted as text"

type xlsxReader struct {
	path string
	f    *excelize.File
	file *os.File
	rows *excelize.Rows
	h    headerMap
	n    int
	max  int
	line int
	// numberAccounts holds the rows whose account cell is stored as a number; typesErr says why
	// that could not be told, and then every row is flagged.
	numberAccounts map[int]bool
	typesErr       error
}

func newXLSXReader(file *os.File, size int64, path string, opts ReadOptions) (*xlsxReader, error) {
	f, err := excelize.OpenReader(file, excelize.Options{UnzipSizeLimit: xlsxUnzipSizeLimit, UnzipXMLSizeLimit: xlsxUnzipXMLSizeLimit})
	if err != nil {
		if strings.Contains(err.Error(), "unzip size") {
			return nil, &InputError{Path: path, Err: ErrXLSXSizeLimit}
		}
		return nil, &InputError{Path: path, Err: fmt.Errorf("%w: not a readable XLSX workbook: %v", ErrMalformed, err)}
	}
	x := &xlsxReader{path: path, f: f, file: file, max: opts.MaxRows}
	sheets := f.GetSheetList()
	sheet := opts.Sheet
	if sheet == "" {
		if len(sheets) == 0 {
			x.Close()
			return nil, &InputError{Path: path, Err: fmt.Errorf("%w: the workbook has no sheets", ErrSheetNotFound)}
		}
		sheet = sheets[0]
	} else if !contains(sheets, sheet) {
		x.Close()
		return nil, &InputError{Path: path, Err: fmt.Errorf("%w: %q; sheets: %s", ErrSheetNotFound, sheet, strings.Join(sheets, ", "))}
	}
	if x.rows, err = f.Rows(sheet); err != nil {
		x.Close()
		return nil, &InputError{Path: path, Err: fmt.Errorf("%w: sheet %q: %v", ErrMalformed, sheet, err)}
	}
	for {
		cells, line, err := x.next()
		if errors.Is(err, io.EOF) {
			x.Close()
			return nil, &InputError{Path: path, Err: fmt.Errorf("%w: sheet %q is empty, no header row", ErrHeaderMissing, sheet)}
		}
		if err != nil {
			x.Close()
			return nil, err
		}
		if blank(cells) {
			continue
		}
		if x.h, err = parseHeader(path, line, cells); err != nil {
			x.Close()
			return nil, err
		}
		x.numberAccounts, x.typesErr = numberCells(file, size, sheet, x.h.account+1)
		return x, nil
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// next reads one row's raw cell values. Raw, not formatted: formatting turns a 12-digit account
// into 1.23457E+11 and may round an amount; text cells are the same either way.
func (x *xlsxReader) next() ([]string, int, error) {
	if !x.rows.Next() {
		if err := x.rows.Error(); err != nil {
			return nil, 0, &InputError{Path: x.path, Err: fmt.Errorf("%w: %v", ErrMalformed, err)}
		}
		return nil, 0, io.EOF
	}
	x.line++
	cells, err := x.rows.Columns(excelize.Options{RawCellValue: true})
	if err != nil {
		return nil, 0, &InputError{Path: x.path, Line: x.line, Err: fmt.Errorf("%w: %v", ErrMalformed, err)}
	}
	return cells, x.line, nil
}

// Next returns the next non-blank row.
func (x *xlsxReader) Next() (Row, error) {
	for {
		cells, line, err := x.next()
		if err != nil {
			return Row{}, err
		}
		if blank(cells) {
			continue
		}
		x.n++
		if x.max > 0 && x.n > x.max {
			return Row{}, &InputError{Path: x.path, Line: line, Err: fmt.Errorf("%w: more than %d data rows", ErrTooManyRows, x.max)}
		}
		r := x.h.row(line, cells)
		r.Amount = xlsxAmount(r.Amount)
		var warn bool
		r.Account, warn = xlsxAccount(r.Account)
		switch {
		case warn || (x.numberAccounts[line] && r.Account != ""):
			r.Warnings = append(r.Warnings, WarnAccountNumber)
		case x.typesErr != nil && r.Account != "":
			r.Warnings = append(r.Warnings, WarnAccountUnchecked)
		}
		return r, nil
	}
}

// xlsxAmount turns a number cell into the decimal the user sees. Excel shows at most 15
// significant digits and arithmetic leaves noise beyond them (1234.5600000000001, the sum
// 0.30000000000000004), so the value is rounded to 15 significant digits; a real third decimal
// survives and is rejected by ParseAmount. Text cells pass unchanged.
func xlsxAmount(s string) string {
	if !looksFloat(s) {
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	d, err := decimal.NewFromString(strconv.FormatFloat(f, 'g', 15, 64))
	if err != nil {
		return s
	}
	return d.String()
}

// looksFloat is a plain stored number: digits, an optional point and exponent, nothing else.
func looksFloat(s string) bool {
	if s == "" {
		return false
	}
	digits := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits = true
		case c == '.' || c == 'E' || c == 'e' || ((c == '+' || c == '-') && i > 0 && (s[i-1] == 'E' || s[i-1] == 'e')):
		default:
			return false
		}
	}
	return digits
}

// xlsxAccount reads an account stored as a number as its digits. Excel writes a large number in
// the sheet as 1.23456789012E+11 and keeps 15 significant digits: both mean the cell was a
// number, so leading zeros are gone and longer accounts may be rounded.
func xlsxAccount(s string) (string, bool) {
	if !looksFloat(s) {
		return s, false
	}
	if strings.ContainsAny(s, ".eE") {
		d, err := decimal.NewFromString(s)
		if err != nil || !d.IsInteger() {
			return s, true
		}
		return d.String(), true
	}
	return s, len(s) > 15
}

// Close releases the workbook and its temporary files.
func (x *xlsxReader) Close() error {
	var err error
	if x.rows != nil {
		err = x.rows.Close()
	}
	if cerr := x.f.Close(); err == nil {
		err = cerr
	}
	if cerr := x.file.Close(); err == nil {
		err = cerr
	}
	return err
}
