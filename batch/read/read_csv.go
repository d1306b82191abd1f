package read

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// csvReader reads with encoding/csv rather than gocsv: gocsv's reflection-based decode runs at
// about half a million rows a second, a quarter of the target.
type csvReader struct {
	path   string
	r      *csv.Reader
	guard  *recordGuard
	closer io.Closer
	h      headerMap
	rows   int
	max    int
}

// NewCSVReader reads a CSV stream and its header. name is used in messages.
func NewCSVReader(r io.Reader, name string, opts Options) (Reader, error) {
	return newCSVReader(r, nil, name, opts)
}

type limitedReader struct {
	r    io.Reader
	left int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, ErrFileTooLarge
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// MaxCSVRecordBytes bounds one line of a CSV, and so one field: encoding/csv holds a whole record
// in memory, and no payout needs a line this long.
const MaxCSVRecordBytes = 64 << 10

const csvBufferSize = 64 << 10

// recordGuard refuses a line longer than MaxCSVRecordBytes, and a record of many lines (inside an
// unclosed quote) that grows past it, as the bytes go by: the parser never holds more than about
// twice the limit.
type recordGuard struct {
	r       io.Reader
	line    int   // the line being read, 1-based
	lineLen int   // its bytes so far
	read    int64 // bytes passed on
	// recordStart is the parser's offset after its last whole record, where the record it reads
	// now begins, and recordLine that record's first line (blank lines before it aside).
	recordStart int64
	recordLine  int
	err         error
}

func (g *recordGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	g.read += int64(n)
	for chunk := p[:n]; ; {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			g.lineLen += len(chunk)
			break
		}
		if g.lineLen+i > MaxCSVRecordBytes {
			g.lineLen += i
			break
		}
		g.line, g.lineLen, chunk = g.line+1, 0, chunk[i+1:]
	}
	switch {
	case g.lineLen > MaxCSVRecordBytes:
		g.err = &recordTooLong{line: g.line, reason: "line longer than 64 KiB: no payout needs one this long (is this a payroll file?)"}
	case g.read-g.recordStart > MaxCSVRecordBytes+csvBufferSize:
		g.err = &recordTooLong{line: g.recordLine, reason: "a quoted value runs on past 64 KiB: a quote (\") is not closed"}
	}
	if g.err != nil {
		return n, g.err
	}
	return n, err
}

type recordTooLong struct {
	line   int
	reason string
}

func (e *recordTooLong) Error() string { return e.reason }

func (e *recordTooLong) Unwrap() error { return ErrRecordTooLong }

func newCSVReader(r io.Reader, closer io.Closer, name string, opts Options) (*csvReader, error) {
	limit := opts.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxCSVBytes
	}
	guard := &recordGuard{r: &limitedReader{r: r, left: limit + 1}, line: 1, recordLine: 1}
	br := bufio.NewReaderSize(guard, csvBufferSize)
	if magic, err := br.Peek(4); err == nil {
		if err := notCSV(magic); err != nil {
			return nil, &InputError{Path: name, Err: err}
		}
	}
	if bom, err := br.Peek(3); err == nil && string(bom) == "\ufeff" {
		_, _ = br.Discard(3)
	}
	cr := csv.NewReader(br)
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = false
	c := &csvReader{path: name, r: cr, guard: guard, closer: closer, max: opts.MaxRows}
	for {
		rec, err := c.read()
		if errors.Is(err, io.EOF) {
			return nil, &InputError{Path: name, Err: fmt.Errorf("%w: the file is empty, no header row", ErrHeaderMissing)}
		}
		if err != nil {
			return nil, c.wrap(err)
		}
		line, _ := cr.FieldPos(0)
		if err := checkUTF8(rec); err != nil {
			return nil, &InputError{Path: name, Line: line, Err: err}
		}
		if blank(rec) {
			continue
		}
		if c.h, err = parseHeader(name, line, rec); err != nil {
			return nil, err
		}
		return c, nil
	}
}

func checkUTF8(rec []string) error {
	for _, f := range rec {
		if !utf8.ValidString(f) {
			return ErrNotUTF8
		}
	}
	return nil
}

func (c *csvReader) wrap(err error) error {
	var pe *csv.ParseError
	var long *recordTooLong
	if errors.As(err, &long) {
		return &InputError{Path: c.path, Line: long.line, Err: long}
	}
	if errors.As(err, &pe) {
		return &InputError{Path: c.path, Line: pe.StartLine, Err: fmt.Errorf("%w: %s", ErrMalformed, explainCSV(pe))}
	}
	if errors.Is(err, ErrFileTooLarge) {
		return &InputError{Path: c.path, Err: ErrFileTooLarge}
	}
	return fmt.Errorf("read %s: %w", c.path, err)
}

// explainCSV says where encoding/csv stopped and how to fix the file, in a person's words. The
// line is the record's first; a record that spans lines says where in it the reader stopped.
func explainCSV(pe *csv.ParseError) string {
	at := fmt.Sprintf("character %d", pe.Column)
	if pe.Line != pe.StartLine {
		at = fmt.Sprintf("line %d, character %d", pe.Line, pe.Column)
	}
	const fix = `put the whole field in quotes and double each quote inside it, as in "Ahmad ""Mat"" Faizal"`
	switch {
	case errors.Is(pe.Err, csv.ErrBareQuote):
		return at + `: a quote (") inside a field that does not begin with one: ` + fix
	case errors.Is(pe.Err, csv.ErrQuote):
		return at + ": a quoted field is not closed properly (its closing quote is missing, or more text follows it before the comma): " + fix
	}
	return fmt.Sprintf("%s: %v", at, pe.Err)
}

// read reads one record, and tells the guard where the next begins.
func (c *csvReader) read() ([]string, error) {
	rec, err := c.r.Read()
	c.guard.recordStart = c.r.InputOffset()
	if err == nil && len(rec) > 0 {
		last, _ := c.r.FieldPos(len(rec) - 1)
		c.guard.recordLine = last + strings.Count(rec[len(rec)-1], "\n") + 1
	}
	return rec, err
}

// Next returns the next non-blank row.
func (c *csvReader) Next() (Row, error) {
	for {
		rec, err := c.read()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return Row{}, io.EOF
			}
			return Row{}, c.wrap(err)
		}
		line, _ := c.r.FieldPos(0)
		if err := checkUTF8(rec); err != nil {
			return Row{}, &InputError{Path: c.path, Line: line, Err: err}
		}
		if blank(rec) {
			continue
		}
		c.rows++
		if c.max > 0 && c.rows > c.max {
			return Row{}, &InputError{Path: c.path, Line: line, Err: fmt.Errorf("%w: more than %d data rows", ErrTooManyRows, c.max)}
		}
		row := c.h.row(line, rec)
		if len(rec) != c.h.width {
			// The whole line is the value: which field moved is for the person to see.
			whole := &RowError{Line: line, Column: WholeRow, Value: Excerpt(strings.Join(rec, ",")), Err: fieldCountError(len(rec), c.h.width)}
			row.Problems = append([]*RowError{whole}, row.Problems...)
		} else if beyond := c.beyondHeader(line, rec); beyond != nil {
			row.Problems = append([]*RowError{beyond}, row.Problems...)
		}
		return row, nil
	}
}

// beyondHeader rejects a value under no column name. A spreadsheet saving CSV gives every line
// as many fields as its widest row, the header included, so a note typed to the right of the
// table would otherwise be ignored, as it is not in a workbook.
func (c *csvReader) beyondHeader(line int, rec []string) *RowError {
	for i := c.h.named; i < len(rec); i++ {
		if v := strings.TrimSpace(rec[i]); v != "" {
			return &RowError{Line: line, Column: WholeRow, Value: Excerpt(v), Err: fmt.Errorf(
				"%w: field %d holds a value, beyond the header's last named column (field %d): give its column a header, or delete it",
				ErrFieldCount, i+1, c.h.named)}
		}
	}
	return nil
}

// fieldCountError explains a row whose fields would not line up with the header: its values
// would land in the wrong columns, an amount of "1,200.50" read as 1 with "200.50" after it.
func fieldCountError(got, want int) error {
	hint := "an unquoted comma? quote the value or drop the thousands separator"
	if got < want {
		hint = "a missing comma? every row needs as many fields as the header, empty ones included"
	}
	return fmt.Errorf("%w: has %d fields, the header has %d: %s", ErrFieldCount, got, want, hint)
}

// notCSV recognises a workbook by its first bytes: a zip (an .xlsx) or an OLE2 container (an old
// .xls, or an .xlsx saved with a password).
func notCSV(magic []byte) error {
	switch {
	case bytes.HasPrefix(magic, zipMagic):
		return ErrNotCSV
	case bytes.HasPrefix(magic, ole2Magic[:4]):
		return fmt.Errorf("%w (an old .xls, or a password-protected workbook)", ErrNotCSV)
	}
	return nil
}

// Close closes the file when the reader opened it.
func (c *csvReader) Close() error {
	if c.closer != nil {
		return c.closer.Close()
	}
	return nil
}

// Sheet is empty: a CSV has none.
func (c *csvReader) Sheet() string { return "" }
