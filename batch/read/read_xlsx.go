package read

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// Reasons an XLSX row is rejected as read.
var (
	ErrAccountNumber = errors.New("account stored as a number: leading zeros or digits may have been lost; " +
		"store the account column as text (format the cells as Text and retype them, or prefix each with an apostrophe), " +
		"or pass --numeric-accounts if your account numbers have no leading zeros")
	ErrFormula   = errors.New("cell holds a formula: type the value, not a formula (copy the column and paste it as values)")
	ErrHiddenRow = errors.New("row is hidden in the workbook: unhide it and check it, delete it, or pass --hidden-rows to pay hidden rows")
)

// ErrHiddenColumn is a payout column (reference, bank, provider, account, amount) hidden in the
// workbook, or too narrow to show a digit: what people check is not what is paid.
var ErrHiddenColumn = errors.New("a column the payouts are made of is hidden in the workbook")

// WarnAccountNumber flags an account cell stored as a number, accepted by --numeric-accounts.
const WarnAccountNumber = "account stored as a number (accepted by --numeric-accounts): check that no leading zeros were lost"

type xlsxReader struct {
	path string
	f    *excelize.File
	file *os.File
	rows *excelize.Rows
	scan *sheetScanner
	opts Options
	// sheet is the sheet being read.
	sheet string
	h     headerMap
	n     int
	line  int
}

func newXLSXReader(file *os.File, opened os.FileInfo, path string, opts Options) (*xlsxReader, error) {
	zr, err := zip.NewReader(file, opened.Size())
	if err != nil {
		return nil, &InputError{Path: path, Err: fmt.Errorf("%w: not a readable XLSX workbook: %v", ErrMalformed, err)}
	}
	if err := checkSharedStrings(zr); err != nil {
		return nil, &InputError{Path: path, Err: xlsxError(err)}
	}
	f, err := openWorkbook(path, opened)
	if err != nil {
		return nil, err
	}
	x := &xlsxReader{path: path, f: f, file: file, opts: opts}
	sheet, err := x.chooseSheet()
	if err == nil {
		x.sheet = sheet
		err = x.openSheet(zr, sheet)
	}
	if err != nil {
		x.Close()
		return nil, err
	}
	return x, nil
}

// ErrChangedWhileOpened is a workbook replaced or rewritten while it was being opened.
var ErrChangedWhileOpened = errors.New("the file changed while it was being opened: run again once nothing is writing to it")

// openWorkbook opens the workbook at path for excelize, which reads it in place: given the open
// file as a reader instead, excelize would first copy the whole file into memory. The path must
// name the file that was opened and checked, unchanged, before excelize opens it (a FIFO put in
// its place would block the open) and once excelize has read it.
func openWorkbook(path string, opened os.FileInfo) (*excelize.File, error) {
	changed := fmt.Errorf("%s: %w", filepath.Base(path), ErrChangedWhileOpened)
	if !unchanged(path, opened) {
		return nil, changed
	}
	f, err := excelize.OpenFile(path, excelize.Options{UnzipSizeLimit: xlsxUnzipSizeLimit, UnzipXMLSizeLimit: xlsxUnzipXMLSizeLimit})
	if err != nil {
		if strings.Contains(err.Error(), "unzip size") {
			return nil, &InputError{Path: path, Err: ErrXLSXSizeLimit}
		}
		return nil, &InputError{Path: path, Err: fmt.Errorf("%w: not a readable XLSX workbook: %v", ErrMalformed, err)}
	}
	if !unchanged(path, opened) {
		f.Close()
		return nil, changed
	}
	return f, nil
}

// unchanged tells whether path names the file opened, with its size and time of change then.
func unchanged(path string, opened os.FileInfo) bool {
	now, err := os.Stat(path)
	return err == nil && os.SameFile(opened, now) && now.Size() == opened.Size() && now.ModTime().Equal(opened.ModTime())
}

// xlsxError names what was wrong with a workbook's XML.
func xlsxError(err error) error {
	if errors.Is(err, ErrCellTooLong) {
		return err
	}
	return fmt.Errorf("%w: %v", ErrMalformed, err)
}

// chooseSheet is the sheet named by --sheet, or else the active one: the sheet the user saw
// when the workbook was saved, not whatever happens to come first. A hidden sheet is read only
// when named.
func (x *xlsxReader) chooseSheet() (string, error) {
	sheets := x.f.GetSheetList()
	if len(sheets) == 0 {
		return "", &InputError{Path: x.path, Err: fmt.Errorf("%w: the workbook has no sheets", ErrSheetNotFound)}
	}
	if x.opts.Sheet != "" {
		return x.namedSheet(sheets)
	}
	i := x.f.GetActiveSheetIndex()
	if i < 0 || i >= len(sheets) {
		i = 0
	}
	sheet := sheets[i]
	if visible, err := x.f.GetSheetVisible(sheet); err != nil || !visible {
		return "", &InputError{Path: x.path, Err: fmt.Errorf("%w: %q; name the sheet to pay with --sheet (sheets: %s)",
			ErrHiddenSheet, sheet, strings.Join(sheets, ", "))}
	}
	return sheet, nil
}

// namedSheet is the sheet --sheet names: by its exact name, or else by the one name that matches
// ignoring case, as people type "payroll" for "Payroll".
func (x *xlsxReader) namedSheet(sheets []string) (string, error) {
	want := x.opts.Sheet
	if contains(sheets, want) {
		return want, nil
	}
	var alike []string
	for _, s := range sheets {
		if strings.EqualFold(s, want) {
			alike = append(alike, s)
		}
	}
	switch len(alike) {
	case 1:
		return alike[0], nil
	case 0:
		return "", &InputError{Path: x.path, Err: fmt.Errorf("%w: %q; sheets: %s", ErrSheetNotFound, want, strings.Join(sheets, ", "))}
	}
	// Excel allows no two names that differ only in case; another writer might.
	return "", &InputError{Path: x.path, Err: fmt.Errorf("%w: %q names %s, which differ only in case: give the exact name", ErrSheetNotFound, want, quoteAll(alike))}
}

func quoteAll(list []string) string {
	quoted := make([]string, len(list))
	for i, s := range list {
		quoted[i] = strconv.Quote(s)
	}
	return strings.Join(quoted, " and ")
}

// headerElsewhere adds to a header refused in sheet the other sheets whose first row is a
// header: a workbook whose active sheet is a cover page has its rows in another.
func (x *xlsxReader) headerElsewhere(sheet string, err error) error {
	var ie *InputError
	if !errors.Is(err, ErrHeaderMissing) || !errors.As(err, &ie) {
		return err
	}
	which := "the sheet named by --sheet"
	if x.opts.Sheet == "" {
		which = "the active sheet, the one shown when the workbook was saved"
	}
	var found []string
	for _, other := range x.f.GetSheetList() {
		if other != sheet && x.hasHeader(other) {
			found = append(found, other)
		}
	}
	switch len(found) {
	case 0:
		ie.Err = fmt.Errorf("sheet %q (%s): %w; no other sheet has a header row with the required columns", sheet, which, ie.Err)
	case 1:
		ie.Err = fmt.Errorf("sheet %q (%s): %w; sheet %q has the header: run again with --sheet %s", sheet, which, ie.Err, found[0], strconv.Quote(found[0]))
	default:
		ie.Err = fmt.Errorf("sheet %q (%s): %w; sheets %s have the header: run again with --sheet NAME", sheet, which, ie.Err, quoteAll(found))
	}
	return ie
}

// headerLooks is how many rows of another sheet are looked at for a header.
const headerLooks = 20

// hasHeader reports whether the first non-blank row of sheet, among its first headerLooks, is a
// header with every required column.
func (x *xlsxReader) hasHeader(sheet string) bool {
	rows, err := x.f.Rows(sheet)
	if err != nil {
		return false
	}
	defer rows.Close()
	for line := 1; line <= headerLooks && rows.Next(); line++ {
		cells, err := rows.Columns(excelize.Options{RawCellValue: true})
		if err != nil {
			return false
		}
		if blank(cells) {
			continue
		}
		_, err = parseHeader(x.path, line, cells)
		return err == nil
	}
	return false
}

// openSheet starts both readers of the sheet and reads its header.
func (x *xlsxReader) openSheet(zr *zip.Reader, sheet string) error {
	var err error
	if x.scan, err = openSheetScanner(zr, sheet); err != nil {
		return &InputError{Path: x.path, Err: fmt.Errorf("%w: sheet %q: %v", ErrMalformed, sheet, err)}
	}
	if x.rows, err = x.f.Rows(sheet); err != nil {
		return &InputError{Path: x.path, Err: fmt.Errorf("%w: sheet %q: %v", ErrMalformed, sheet, err)}
	}
	for {
		cells, line, _, err := x.next()
		if errors.Is(err, io.EOF) {
			return x.headerElsewhere(sheet, &InputError{Path: x.path, Err: fmt.Errorf("%w: the sheet is empty, no header row", ErrHeaderMissing)})
		}
		if err != nil {
			return err
		}
		if blank(cells) {
			continue
		}
		if x.h, err = parseHeader(x.path, line, cells); err != nil {
			return x.headerElsewhere(sheet, err)
		}
		x.scan.track = [slots]int{x.h.ref + 1, x.h.bank + 1, x.h.serviceID + 1, x.h.account + 1, x.h.amount + 1}
		for slot, col := range x.scan.track {
			if col > 0 && x.scan.hidden(col) {
				letter, _ := excelize.ColumnNumberToName(col)
				return &InputError{Path: x.path, Line: line, Err: fmt.Errorf("%w: sheet %q, column %s (%s, headed in cell %s%d) is hidden or too narrow to read: "+
					"unhide it (select the columns either side, right-click, Unhide) or widen it, check what it holds, save and run again",
					ErrHiddenColumn, sheet, letter, slotColumns[slot], letter, line)}
			}
		}
		return nil
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

// next reads one row's raw cell values and what the XML says of it. Raw, not formatted:
// formatting turns a 12-digit account into 1.23457E+11 and may round an amount; text cells are
// the same either way. The scanner reads each row before excelize does, so that a cell too long
// is refused before excelize holds it.
func (x *xlsxReader) next() ([]string, int, rowFacts, error) {
	facts, err := x.scan.through(x.line + 1)
	if err != nil {
		return nil, 0, facts, &InputError{Path: x.path, Line: x.line + 1, Err: xlsxError(err)}
	}
	if !x.rows.Next() {
		if err := x.rows.Error(); err != nil {
			return nil, 0, facts, &InputError{Path: x.path, Err: fmt.Errorf("%w: %v", ErrMalformed, err)}
		}
		return nil, 0, facts, io.EOF
	}
	x.line++
	cells, err := x.rows.Columns(excelize.Options{RawCellValue: true})
	if err != nil {
		return nil, 0, facts, &InputError{Path: x.path, Line: x.line, Err: fmt.Errorf("%w: %v", ErrMalformed, err)}
	}
	return cells, x.line, facts, nil
}

// Next returns the next non-blank row.
func (x *xlsxReader) Next() (Row, error) {
	for {
		cells, line, facts, err := x.next()
		if err != nil {
			return Row{}, err
		}
		if blank(cells) && facts.formula == 0 {
			continue
		}
		if !facts.seen {
			// The two readers disagree on the sheet: what the scanner checks is not what is paid.
			return Row{}, &InputError{Path: x.path, Line: line, Err: fmt.Errorf("%w: the row's cells could not be checked; save the workbook again from Excel", ErrMalformed)}
		}
		x.n++
		if x.opts.MaxRows > 0 && x.n > x.opts.MaxRows {
			return Row{}, &InputError{Path: x.path, Line: line, Err: fmt.Errorf("%w: more than %d data rows", ErrTooManyRows, x.opts.MaxRows)}
		}
		return x.row(line, cells, facts), nil
	}
}

// row makes a Row of a sheet row, with the problems only a workbook has: a hidden row, a value
// beyond the header, a formula, a boolean, date or percentage where a value is paid, an account
// stored as a number.
func (x *xlsxReader) row(line int, cells []string, facts rowFacts) Row {
	r := x.h.row(line, cells)
	// Both readers' word on a hidden row counts: excelize's, and the scanner's of the same XML.
	if (x.rows.GetRowOpts().Hidden || facts.hidden) && !x.opts.HiddenRows {
		r.problem(WholeRow, "", ErrHiddenRow)
	}
	for i := x.h.named; i < len(cells); i++ {
		if v := strings.TrimSpace(cells[i]); v != "" {
			cell, _ := excelize.CoordinatesToCellName(i+1, line)
			last, _ := excelize.ColumnNumberToName(x.h.named)
			r.problem(WholeRow, "", fmt.Errorf("%w: cell %s holds %q, beyond the header's last column %s: give its column a header, or delete it",
				ErrFieldCount, cell, Excerpt(v), last))
			break
		}
	}
	for slot, col := range slotColumns {
		if facts.formula&(1<<slot) == 0 || hasProblem(r.Problems, col) {
			continue
		}
		value, err := field(cells, x.slotIndex(slot)), ErrFormula
		if strings.TrimSpace(value) == "" {
			err = fmt.Errorf("%w; it has no saved value", ErrFormula)
		}
		r.problem(col, Excerpt(value), err)
	}
	for slot, col := range slotColumns {
		if err := facts.shown[slot].err(); err != nil && !hasProblem(r.Problems, col) {
			r.problem(col, Excerpt(field(cells, x.slotIndex(slot))), err)
		}
	}
	for _, slot := range [...]int{slotAmount, slotAccount} {
		col, code := slotColumns[slot], facts.format[slot]
		number := facts.number&(1<<slot) != 0
		if code == "" || hasProblem(r.Problems, col) || !number && facts.text&(1<<slot) == 0 {
			continue
		}
		raw := field(cells, x.slotIndex(slot))
		if why := formatLie(code, raw, number, slot == slotAccount); why != "" {
			cell, _ := excelize.CoordinatesToCellName(x.slotIndex(slot)+1, line)
			fix := "format the cell as Number with 2 decimals (or General), then check the amount it shows"
			if slot == slotAccount {
				fix = "format the column as Text and type each account as the bank gave it"
			}
			r.problem(col, Excerpt(raw), fmt.Errorf("%w: cell %s of sheet %q holds %s, but its format %q %s: %s",
				ErrCellFormat, cell, x.sheet, Excerpt(raw), code, why, fix))
		}
	}
	r.Amount = xlsxAmount(r.Amount)
	var number bool
	r.Account, number = xlsxAccount(r.Account)
	number = number || facts.number&(1<<slotAccount) != 0
	switch {
	case !number || r.Account == "" || hasProblem(r.Problems, ColAccount):
	case x.opts.NumericAccounts:
		r.Warnings = append(r.Warnings, WarnAccountNumber)
	default:
		r.problem(ColAccount, r.Account, ErrAccountNumber)
	}
	return r
}

// slotIndex is the 0-based column of a slot, -1 when the header lacks it.
func (x *xlsxReader) slotIndex(slot int) int { return x.scan.track[slot] - 1 }

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
	if x.scan != nil {
		if cerr := x.scan.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := x.f.Close(); err == nil {
		err = cerr
	}
	if cerr := x.file.Close(); err == nil {
		err = cerr
	}
	return err
}

// Sheet is the sheet being read.
func (x *xlsxReader) Sheet() string { return x.sheet }
