package batch

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

// numberCells finds the rows whose cell in column col (1-based) is stored as a number. excelize's
// streaming iterator gives values only, and an account typed as a number reads the same as text
// once its leading zeros are gone: "000181590832" saved by a spreadsheet as the number 181590832.
// The sheet's XML is scanned once more for the cell's type attribute, without building rows.
func numberCells(r io.ReaderAt, size int64, sheet string, col int) (map[int]bool, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, err
	}
	sheetPath, err := sheetXMLPath(zr, sheet)
	if err != nil {
		return nil, err
	}
	for _, f := range zr.File {
		if f.Name != sheetPath {
			continue
		}
		if f.UncompressedSize64 > xlsxUnzipSizeLimit {
			return nil, ErrXLSXSizeLimit
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return scanNumberCells(bufio.NewReaderSize(io.LimitReader(rc, xlsxUnzipSizeLimit), 64<<10), col)
	}
	return nil, fmt.Errorf("sheet %q: %s is not in the workbook", sheet, sheetPath)
}

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

// scanNumberCells reads start tags only: <row r="N"> and <c r="D12" t="...">. A cell with a value
// and no type, or type "n", is a number. Namespace prefixes (<x:c>) are allowed. It allocates
// nothing per cell: it runs over every cell of the sheet.
func scanNumberCells(br *bufio.Reader, col int) (map[int]bool, error) {
	found := make(map[int]bool)
	row, cellCol := 0, 0
	for {
		if _, err := br.ReadSlice('<'); err != nil {
			if errors.Is(err, io.EOF) {
				return found, nil
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				return nil, err
			}
			continue
		}
		tag, err := br.ReadSlice('>')
		if err != nil {
			if errors.Is(err, io.EOF) {
				return found, nil
			}
			return nil, err // a start tag longer than the buffer is not a sheet we read
		}
		end := bytes.IndexAny(tag, " \t\r\n/>")
		if end < 0 {
			continue
		}
		name, attrs := tag[:end], tag[end:]
		if i := bytes.IndexByte(name, ':'); i >= 0 {
			name = name[i+1:]
		}
		switch {
		case len(name) == 3 && string(name) == "row":
			if n, err := strconv.Atoi(string(attr(attrs, keyR))); err == nil {
				row = n
			} else {
				row++
			}
			cellCol = 0
		case len(name) == 1 && name[0] == 'c':
			cellCol++
			if c, r, ok := cellRef(attr(attrs, keyR)); ok {
				cellCol, row = c, r
			}
			if cellCol != col || bytes.HasSuffix(tag, []byte("/>")) {
				continue
			}
			if t := attr(attrs, keyT); len(t) == 0 || (len(t) == 1 && t[0] == 'n') {
				found[row] = true
			}
		}
	}
}

var keyR, keyT = []byte(`r="`), []byte(`t="`)

// attr returns the value of an attribute whose key is ` name="`, or nil.
func attr(attrs, key []byte) []byte {
	for i := 0; i < len(attrs); {
		j := bytes.Index(attrs[i:], key)
		if j < 0 {
			return nil
		}
		at := i + j
		if at > 0 && (attrs[at-1] == ' ' || attrs[at-1] == '\t' || attrs[at-1] == '\n' || attrs[at-1] == '\r') {
			rest := attrs[at+len(key):]
			if k := bytes.IndexByte(rest, '"'); k >= 0 {
				return rest[:k]
			}
			return nil
		}
		i = at + len(key)
	}
	return nil
}

// cellRef splits "AB12" into column 28 and row 12.
func cellRef(ref []byte) (col, row int, ok bool) {
	i := 0
	for ; i < len(ref) && ref[i] >= 'A' && ref[i] <= 'Z'; i++ {
		col = col*26 + int(ref[i]-'A'+1)
	}
	if i == 0 || i == len(ref) {
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
