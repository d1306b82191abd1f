package report

import (
	"archive/zip"
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"
)

// spliceRowsMax is the most rows sheetRowsXML holds in memory (about 540 bytes a row of a run
// report, so up to ~27 MB); a larger table goes through excelize's StreamWriter, which spills to a
// temporary file.
const spliceRowsMax = 50_000

// rowsSheetPart is the Rows sheet inside the package: excelize.NewFile's first sheet, which
// writeXLSX renames. TestXLSXRowsMatchExcelize fails if that ever changes.
const rowsSheetPart = "xl/worksheets/sheet1.xml"

// sheetRowsXML is the data rows of t (sheet rows 2 onwards) as excelize's StreamWriter.SetRow
// writes them, byte for byte, for the values streamCell makes. Through SetRow they were half of a
// run's XLSX time, which is on the path of every run's end: SetRow builds each cell's XML through
// a struct, an escaping pass over a copy and a regular expression. The two halves of the table
// are written side by side (and compressed side by side by splicingZip): the XLSX is the longest
// of a run's three reports.
//
// It covers only what it can write exactly as excelize would: ok is false as soon as a value is
// anything else (a string with a control character, leading or trailing space, "_x", a character
// XML cannot carry, or over 32,767 bytes; a number that is not finite), and the caller then
// streams the table through excelize itself. So does a table of more than spliceRowsMax rows.
func sheetRowsXML(t table, st styles) (halves [2][]byte, ok bool) {
	if t.n > spliceRowsMax {
		return halves, false
	}
	columns := make([]string, len(t.header))
	for i := range columns {
		name, err := excelize.ColumnNumberToName(i + 1)
		if err != nil {
			return halves, false
		}
		columns[i] = name
	}
	mid := t.n / 2
	var secondOK bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		halves[1], secondOK = rowsXML(t, st, columns, mid, t.n)
	}()
	halves[0], ok = rowsXML(t, st, columns, 0, mid)
	wg.Wait()
	return halves, ok && secondOK
}

// rowsXML writes the table's rows from (inclusive) to to (exclusive).
func rowsXML(t table, st styles, columns []string, from, to int) ([]byte, bool) {
	b := make([]byte, 0, (to-from)*512)
	var buf []cell
	values := make([]any, 0, len(columns))
	for i := from; i < to; i++ {
		buf = t.row(i, buf)
		if len(buf) > len(columns) {
			return nil, false
		}
		values = streamCells(values, buf, st)
		var ok bool
		if b, ok = appendRowXML(b, i+2, values, columns); !ok {
			return nil, false
		}
	}
	return b, true
}

// appendRowXML appends one <row>, as StreamWriter.SetRow with no row options and a sheet without
// column styles writes it.
func appendRowXML(b []byte, row int, values []any, columns []string) ([]byte, bool) {
	rowNum := strconv.Itoa(row)
	b = append(b, `<row r="`...)
	b = append(b, rowNum...)
	b = append(b, `">`...)
	for i, v := range values {
		style := 0
		if c, isCell := v.(excelize.Cell); isCell {
			if c.Formula != "" {
				return nil, false
			}
			style, v = c.StyleID, c.Value
		}
		if v == nil {
			continue
		}
		b = append(b, `<c r="`...)
		b = append(b, columns[i]...)
		b = append(b, rowNum...)
		b = append(b, '"')
		if style > 0 {
			b = append(b, ` s="`...)
			b = strconv.AppendInt(b, int64(style), 10)
			b = append(b, '"')
		}
		switch v := v.(type) {
		case int64:
			b = append(b, `><v>`...)
			b = strconv.AppendInt(b, v, 10)
			b = append(b, `</v></c>`...)
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, false
			}
			b = append(b, `><v>`...)
			b = strconv.AppendFloat(b, v, 'f', -1, 64)
			b = append(b, `</v></c>`...)
		case string:
			if !plainText(v) {
				return nil, false
			}
			b = append(b, ` t="inlineStr"><is><t>`...)
			b = appendEscaped(b, v)
			b = append(b, `</t></is></c>`...)
		default:
			return nil, false
		}
	}
	return append(b, `</row>`...), true
}

// plainText is a string that excelize writes as its XML-escaped self: no truncation, no
// xml:space="preserve", no _xHHHH_ escaping, no character replaced.
func plainText(s string) bool {
	if len(s) > excelize.TotalCellChars || !utf8.ValidString(s) || strings.Contains(s, "_x") {
		return false
	}
	if s != "" && (s[0] == ' ' || s[len(s)-1] == ' ') {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0xFFFE || r == 0xFFFF {
			return false
		}
	}
	return true
}

// appendEscaped escapes as encoding/xml.EscapeText does for a plainText string.
func appendEscaped(b []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '"':
			esc = "&#34;"
		case '\'':
			esc = "&#39;"
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		default:
			continue
		}
		b = append(b, s[last:i]...)
		b = append(b, esc...)
		last = i + 1
	}
	return append(b, s[last:]...)
}

// splicingZip writes the package as the wrapped zip.Writer would, except that the rows are put
// into the Rows sheet's part, which excelize wrote with its header row only, just before its
// </sheetData>. That part is deflated in two halves side by side, the first ended with a sync
// flush and the second with the final block: one valid deflate stream, as pigz makes.
type splicingZip struct {
	*zip.Writer
	rows    [2][]byte
	pending *bytes.Buffer // the Rows sheet part as excelize wrote it
	spliced bool
}

func (z *splicingZip) Create(name string) (io.Writer, error) {
	if err := z.splice(); err != nil {
		return nil, err
	}
	if name == rowsSheetPart {
		z.pending = new(bytes.Buffer)
		return z.pending, nil
	}
	return z.Writer.Create(name)
}

func (z *splicingZip) Close() error {
	if err := z.splice(); err != nil {
		return err
	}
	if !z.spliced {
		return errors.New("report: excelize wrote no " + rowsSheetPart)
	}
	return z.Writer.Close()
}

func (z *splicingZip) splice() error {
	if z.pending == nil {
		return nil
	}
	part := z.pending.Bytes()
	z.pending = nil
	at := bytes.LastIndex(part, []byte("</sheetData>"))
	if at < 0 {
		return errors.New("report: the Rows sheet has no </sheetData> to put the rows before")
	}
	halves := [2][][]byte{{part[:at], z.rows[0]}, {z.rows[1], part[at:]}}
	var deflated [2]bytes.Buffer
	var errs [2]error
	var wg sync.WaitGroup
	for i := range halves {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = deflateHalf(&deflated[i], halves[i], i == len(halves)-1)
		}()
	}
	crc := crc32.NewIEEE()
	var size uint64
	for _, half := range halves {
		for _, piece := range half {
			crc.Write(piece)
			size += uint64(len(piece))
		}
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		return err
	}
	w, err := z.Writer.CreateRaw(&zip.FileHeader{Name: rowsSheetPart, Method: zip.Deflate, CRC32: crc.Sum32(),
		CompressedSize64: uint64(deflated[0].Len() + deflated[1].Len()), UncompressedSize64: size})
	if err != nil {
		return err
	}
	for i := range deflated {
		if _, err := deflated[i].WriteTo(w); err != nil {
			return err
		}
	}
	z.spliced = true
	return nil
}

// deflateHalf compresses pieces into out, ending with the final block when last, or else with a
// sync flush so that the next half's stream can follow it.
func deflateHalf(out *bytes.Buffer, pieces [][]byte, last bool) error {
	fw, err := fastFlater(out)
	if err != nil {
		return err
	}
	defer fastFlaters.Put(fw)
	for _, piece := range pieces {
		if _, err := fw.Write(piece); err != nil {
			return err
		}
	}
	if last {
		return fw.Close()
	}
	return fw.Flush()
}
