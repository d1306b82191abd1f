package read

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
)

// maxCellXMLBytes bounds the text of one cell, or one shared string, as the XML holds it. Excel
// allows 32,767 characters in a cell, at most 10 bytes each when escaped (&#x10FFFF;): anything
// longer is not a spreadsheet's, and excelize would hold all of it in memory.
const maxCellXMLBytes = 512 << 10

// ErrCellTooLong is a cell longer than any spreadsheet writes.
var ErrCellTooLong = errors.New("a cell holds more text than a spreadsheet allows (32,767 characters): the workbook is damaged or not a payroll file")

// xmlScan reads an XML part tag by tag without building anything, counting the text between
// tags since the last reset.
type xmlScan struct {
	br   *bufio.Reader
	text int
}

// nextTag returns the next tag without its angle brackets ("c r=\"A1\"", "/row", "f/").
func (s *xmlScan) nextTag() ([]byte, error) {
	for {
		chunk, err := s.br.ReadSlice('<')
		s.text += len(chunk)
		if s.text > maxCellXMLBytes {
			return nil, ErrCellTooLong
		}
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
	}
	tag, err := s.br.ReadSlice('>')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, errors.New("a tag longer than 64 KiB")
		}
		return nil, err
	}
	// Text in CDATA and comments may hold '>': read on to their real end.
	for _, q := range [][2]string{{"![CDATA[", "]]>"}, {"!--", "-->"}} {
		if !bytes.HasPrefix(tag, []byte(q[0])) {
			continue
		}
		for !bytes.HasSuffix(tag, []byte(q[1])) {
			more, err := s.br.ReadSlice('>')
			s.text += len(more)
			if s.text > maxCellXMLBytes {
				return nil, ErrCellTooLong
			}
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				return nil, err
			}
			tag = more
		}
		return []byte("!"), nil
	}
	return tag[:len(tag)-1], nil
}

// splitTag gives a tag's local name (no namespace prefix), its attributes and whether it ends an
// element.
func splitTag(tag []byte) (name, attrs []byte, end bool) {
	if len(tag) > 0 && tag[0] == '/' {
		end, tag = true, tag[1:]
	}
	i := bytes.IndexAny(tag, " \t\r\n/")
	if i < 0 {
		i = len(tag)
	}
	name, attrs = tag[:i], tag[i:]
	if j := bytes.IndexByte(name, ':'); j >= 0 {
		name = name[j+1:]
	}
	return name, attrs, end
}

// attr returns the value of attribute key in a tag's attributes, quoted either way, spaces
// around '=' allowed; nil when absent.
func attr(attrs []byte, key string) []byte {
	for len(attrs) > 0 {
		attrs = bytes.TrimLeft(attrs, " \t\r\n/")
		eq := bytes.IndexByte(attrs, '=')
		if eq < 0 {
			return nil
		}
		name := bytes.TrimSpace(attrs[:eq])
		rest := bytes.TrimLeft(attrs[eq+1:], " \t\r\n")
		if len(rest) == 0 || (rest[0] != '"' && rest[0] != '\'') {
			return nil
		}
		end := bytes.IndexByte(rest[1:], rest[0])
		if end < 0 {
			return nil
		}
		if string(name) == key {
			return rest[1 : 1+end]
		}
		attrs = rest[end+2:]
	}
	return nil
}

// checkSharedStrings reads the shared strings once before excelize does, so that one string
// longer than a cell can be (a small zip of a huge repeated text) is refused before anything
// holds it.
func checkSharedStrings(zr *zip.Reader) error {
	for _, f := range zr.File {
		if !strings.EqualFold(strings.ReplaceAll(f.Name, "\\", "/"), "xl/sharedStrings.xml") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return err
		}
		defer rc.Close()
		s := xmlScan{br: bufio.NewReaderSize(io.LimitReader(rc, xlsxUnzipSizeLimit), 64<<10)}
		for {
			tag, err := s.nextTag()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if name, _, end := splitTag(tag); !end && string(name) == "si" {
				s.text = 0
			}
		}
	}
	return nil
}

// Columns whose cells the sheet scanner learns about, by slot.
const (
	slotRef = iota
	slotBank
	slotServiceID
	slotAccount
	slotAmount
	slots
)

var slotColumns = [slots]string{ColRef, ColBank, ColServiceID, ColAccount, ColAmount}

// rowFacts is what the XML says of one row beyond its values, a bit per slot.
type rowFacts struct {
	seen    bool // the row is in the XML the scanner reads
	hidden  bool
	number  uint8 // the cell is stored as a number
	formula uint8 // the cell holds a formula; its value is the one cached when last saved
	text    uint8 // the cell is stored as text
	shown   [slots]cellShown
	format  [slots]string // the code of the cell's number format; "" for General
}

// sheetScanner reads a sheet's XML a second time, a row ahead of excelize: it learns the cell
// types and formulas that excelize's streaming rows do not give, and it refuses a cell too long
// before excelize reads it. An account typed as a number reads the same as text once its
// leading zeros are gone: "000181590832" saved by a spreadsheet as the number 181590832.
type sheetScanner struct {
	xmlScan
	rc     io.Closer
	styles numberStyles
	track  [slots]int // 1-based column of each slot, 0 when absent
	row    int        // the row being read
	col    int
	slot   int // of the cell being read, -1 when untracked
	facts  rowFacts
	done   bool
	// hiddenCols are the column ranges (1-based, inclusive) the sheet hides, or makes too
	// narrow to show a digit, as its cols element says before its rows.
	hiddenCols [][2]int
	colDefs    int
}

func openSheetScanner(zr *zip.Reader, sheet string) (*sheetScanner, error) {
	sheetPath, err := sheetXMLPath(zr, sheet)
	if err != nil {
		return nil, err
	}
	styles, err := readNumberStyles(zr)
	if err != nil {
		return nil, err
	}
	for _, f := range zr.File {
		if strings.ReplaceAll(f.Name, "\\", "/") != sheetPath {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		br := bufio.NewReaderSize(io.LimitReader(rc, xlsxUnzipSizeLimit), 64<<10)
		return &sheetScanner{xmlScan: xmlScan{br: br}, rc: rc, styles: styles, slot: -1}, nil
	}
	return nil, fmt.Errorf("sheet %q: %s is not in the workbook", sheet, sheetPath)
}

// through reads the sheet to the end of row line and returns what it found there; a row the
// sheet does not hold has no facts. Rows are read in order, each once.
func (s *sheetScanner) through(line int) (rowFacts, error) {
	for !s.done && s.row <= line {
		tag, err := s.nextTag()
		if errors.Is(err, io.EOF) {
			s.done = true
			break
		}
		if err != nil {
			return rowFacts{}, err
		}
		name, attrs, end := splitTag(tag)
		switch {
		case end && string(name) == "sheetData":
			s.done = true
		case end:
		case string(name) == "row":
			n := s.row + 1
			if r := attr(attrs, "r"); r != nil {
				if n, err = strconv.Atoi(string(r)); err != nil || n <= s.row {
					return rowFacts{}, fmt.Errorf("row %q after row %d: rows out of order", r, s.row)
				}
			}
			facts := s.facts
			prev := s.row
			hidden := attr(attrs, "hidden")
			s.row, s.col, s.slot, s.text = n, 0, -1, 0
			s.facts = rowFacts{seen: true, hidden: string(hidden) == "1" || string(hidden) == "true"}
			if prev == line {
				return facts, nil
			}
		case string(name) == "col":
			if err := s.colWidth(attrs); err != nil {
				return rowFacts{}, err
			}
		case string(name) == "c":
			s.cell(attrs, bytes.HasSuffix(tag, []byte("/")))
		case string(name) == "f" && s.slot >= 0:
			s.facts.formula |= 1 << s.slot
		}
	}
	if s.row == line {
		facts := s.facts
		s.facts = rowFacts{}
		return facts, nil
	}
	return rowFacts{}, nil
}

// cell starts a cell: a value with no type, or type "n", is a number, shown as its style's
// number format shows it; type "b" is a boolean and "d" a date.
func (s *sheetScanner) cell(attrs []byte, empty bool) {
	s.text, s.col, s.slot = 0, s.col+1, -1
	if c, r, ok := cellRef(attr(attrs, "r")); ok && r == s.row {
		s.col = c
	}
	for i, c := range s.track {
		if c == s.col && c > 0 {
			s.slot = i
		}
	}
	if s.slot < 0 || empty {
		return
	}
	style, styled := strconv.Atoi(string(attr(attrs, "s")))
	if styled == nil {
		s.facts.format[s.slot] = s.styles.codes[style]
	}
	switch t := string(attr(attrs, "t")); t {
	case "", "n":
		s.facts.number |= 1 << s.slot
		if styled == nil {
			s.facts.shown[s.slot] = s.styles.shown[style]
		}
	case "s", "str", "inlineStr":
		s.facts.text |= 1 << s.slot
	case "b":
		s.facts.shown[s.slot] = shownBoolean
	case "d":
		s.facts.shown[s.slot] = shownDate
	}
}

// minShownWidth is the narrowest column, in characters, that shows what it holds.
const minShownWidth = 1

// maxColumnDefs bounds a sheet's column definitions: a sheet has at most 16,384 columns, and
// each definition is kept while the sheet is read.
const maxColumnDefs = 16384

// colWidth notes a column range that is hidden, or narrower than minShownWidth.
func (s *sheetScanner) colWidth(attrs []byte) error {
	if s.colDefs++; s.colDefs > maxColumnDefs {
		return fmt.Errorf("more than %d column definitions: a sheet has no more columns", maxColumnDefs)
	}
	first, err1 := strconv.Atoi(string(attr(attrs, "min")))
	last, err2 := strconv.Atoi(string(attr(attrs, "max")))
	if err1 != nil || err2 != nil || last < first {
		return nil
	}
	hidden := string(attr(attrs, "hidden"))
	width, err := strconv.ParseFloat(string(attr(attrs, "width")), 64)
	if hidden == "1" || hidden == "true" || err == nil && width < minShownWidth {
		s.hiddenCols = append(s.hiddenCols, [2]int{first, last})
	}
	return nil
}

// hidden tells whether the sheet hides column col (1-based).
func (s *sheetScanner) hidden(col int) bool {
	for _, r := range s.hiddenCols {
		if col >= r[0] && col <= r[1] {
			return true
		}
	}
	return false
}

func (s *sheetScanner) Close() error { return s.rc.Close() }

// sheetXMLPath maps a sheet's name to its part through xl/workbook.xml and its relationships.
func sheetXMLPath(zr *zip.Reader, sheet string) (string, error) {
	var wb struct {
		Sheets []struct {
			Name string `xml:"name,attr"`
			RID  string `xml:"http://schemas.openxmlformats.org/officeDocument/2006/relationships id,attr"`
		} `xml:"sheets>sheet"`
	}
	var rels struct {
		Rels []struct {
			ID     string `xml:"Id,attr"`
			Target string `xml:"Target,attr"`
		} `xml:"Relationship"`
	}
	if err := readZipXML(zr, "xl/workbook.xml", &wb); err != nil {
		return "", err
	}
	if err := readZipXML(zr, "xl/_rels/workbook.xml.rels", &rels); err != nil {
		return "", err
	}
	for _, s := range wb.Sheets {
		if s.Name != sheet {
			continue
		}
		for _, rel := range rels.Rels {
			if rel.ID == s.RID {
				if strings.HasPrefix(rel.Target, "/") {
					return strings.TrimPrefix(rel.Target, "/"), nil
				}
				return path.Join("xl", rel.Target), nil
			}
		}
	}
	return "", fmt.Errorf("sheet %q has no part in the workbook", sheet)
}

// readZipXML decodes a small XML part (workbook, relationships), at most 16 MiB of it.
func readZipXML(zr *zip.Reader, name string, v any) error {
	for _, f := range zr.File {
		if strings.EqualFold(f.Name, name) {
			rc, err := f.Open()
			if err != nil {
				return err
			}
			defer rc.Close()
			return xml.NewDecoder(io.LimitReader(rc, xlsxUnzipXMLSizeLimit)).Decode(v)
		}
	}
	return fmt.Errorf("%s is missing", name)
}

// cellRef splits "AB12" into column 28 and row 12.
func cellRef(ref []byte) (col, row int, ok bool) {
	i := 0
	for ; i < len(ref) && ref[i] >= 'A' && ref[i] <= 'Z'; i++ {
		col = col*26 + int(ref[i]-'A'+1)
	}
	if i == 0 || i == len(ref) || i > 3 {
		return 0, 0, false
	}
	for _, c := range ref[i:] {
		if c < '0' || c > '9' {
			return 0, 0, false
		}
		row = row*10 + int(c-'0')
	}
	return col, row, true
}
