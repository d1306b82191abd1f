package batch

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// csvReader reads with encoding/csv rather than gocsv: gocsv's reflection-based decode runs at
// about half a million rows a second, a quarter of the target.
type csvReader struct {
	path   string
	r      *csv.Reader
	closer io.Closer
	h      headerMap
	rows   int
	max    int
}

// NewCSVReader reads a CSV stream and its header. name is used in messages.
func NewCSVReader(r io.Reader, name string, opts ReadOptions) (RowReader, error) {
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

func newCSVReader(r io.Reader, closer io.Closer, name string, opts ReadOptions) (*csvReader, error) {
	limit := opts.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxCSVBytes
	}
	br := bufio.NewReaderSize(&limitedReader{r: r, left: limit + 1}, 64<<10)
	if bom, err := br.Peek(3); err == nil && string(bom) == "\ufeff" {
		_, _ = br.Discard(3)
	}
	cr := csv.NewReader(br)
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = false
	c := &csvReader{path: name, r: cr, closer: closer, max: opts.MaxRows}
	for {
		rec, err := cr.Read()
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
	if errors.As(err, &pe) {
		return &InputError{Path: c.path, Line: pe.StartLine, Err: fmt.Errorf("%w: %v", ErrMalformed, pe.Err)}
	}
	if errors.Is(err, ErrFileTooLarge) {
		return &InputError{Path: c.path, Err: ErrFileTooLarge}
	}
	return fmt.Errorf("read %s: %w", c.path, err)
}

// Next returns the next non-blank row.
func (c *csvReader) Next() (Row, error) {
	for {
		rec, err := c.r.Read()
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
		return c.h.row(line, rec), nil
	}
}

// Close closes the file when the reader opened it.
func (c *csvReader) Close() error {
	if c.closer != nil {
		return c.closer.Close()
	}
	return nil
}
