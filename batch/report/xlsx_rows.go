package report

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
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
// writes them, byte for byte, for the values streamCell makes. Through SetRow they are a third of
// a run's XLSX time, which is on the path of every run's end: SetRow builds each cell's XML
// through a struct, an escaping pass over a copy and a regular expression.
//
// It covers only what it can write exactly as excelize would: ok is false as soon as a value is
// anything else (a string with a control character, leading or trailing space, "_x", a character
// XML cannot carry, or over 32,767 bytes; a number that is not finite), and the caller then
// streams the table through excelize itself. So does a table of more than spliceRowsMax rows.
func sheetRowsXML(t table, st styles) (xml []byte, ok bool) {
	if t.n > spliceRowsMax {
		return nil, false
	}
	columns := make([]string, len(t.header))
	for i := range columns {
		name, err := excelize.ColumnNumberToName(i + 1)
		if err != nil {
			return nil, false
		}
		columns[i] = name
	}
	b := make([]byte, 0, t.n*512)
	var buf []cell
	values := make([]any, 0, len(t.header))
	for i := range t.n {
		buf = t.row(i, buf)
		if len(buf) > len(columns) {
			return nil, false
		}
		values = values[:0]
		for _, c := range buf {
			values = append(values, streamCell(c, st))
		}
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
// </sheetData>.
type splicingZip struct {
	*zip.Writer
	rows    []byte
	pending *bytes.Buffer // the Rows sheet part as excelize wrote it
	spliced bool
}

var errNoSheetData = errors.New("report: the Rows sheet has no </sheetData> to put the rows before")

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
		return errNoSheetData
	}
	w, err := z.Writer.Create(rowsSheetPart)
	if err != nil {
		return err
	}
	for _, chunk := range [][]byte{part[:at], z.rows, part[at:]} {
		if _, err := w.Write(chunk); err != nil {
			return err
		}
	}
	z.spliced = true
	return nil
}
