package audit

import (
	"io"
	"strconv"
	"strings"

	"golang.org/x/net/html"
)

// readHTML reads a report's tables as a stream of tokens: a row of th and td is a summary pair,
// a table's head names its columns, and each row of its body is a payout's. A cell may show a
// second fact under its main one (<span class="sub">): the ledger's facts carry their name
// (data-field: invoice, provider, status), the service's and the headers' are not read.
func (rr *reportReader) readHTML(r io.Reader) error {
	z := html.NewTokenizer(r)
	z.SetMaxBuf(rr.v.lim.Line)
	t := htmlTables{rr: rr, z: z}
	for {
		switch z.Next() {
		case html.ErrorToken:
			if z.Err() == io.EOF {
				return nil
			}
			return z.Err()
		case html.TextToken:
			switch {
			case t.sub != nil:
				t.sub.Write(z.Text())
			case t.cell != nil && t.subField == "":
				t.cell.Write(z.Text())
			}
		case html.StartTagToken:
			name, hasAttr := z.TagName()
			t.start(string(name), hasAttr)
		case html.EndTagToken:
			name, _ := z.TagName()
			t.end(string(name))
		}
	}
}

// htmlTables is where readHTML is in a report's tables.
type htmlTables struct {
	rr           *reportReader
	z            *html.Tokenizer
	idx          map[string]int
	th, td       []string
	fields       map[string]string // the named facts of the row's cells
	cell, sub    *strings.Builder
	subField     string
	inHead, isTH bool
	rowN         int
}

func (t *htmlTables) start(name string, hasAttr bool) {
	switch name {
	case "table":
		t.idx = nil
	case "thead":
		t.inHead = true
	case "tr":
		t.th, t.td, t.fields = t.th[:0], t.td[:0], nil
	case "th", "td":
		t.cell, t.isTH = &strings.Builder{}, name == "th"
	case "span":
		if t.cell == nil {
			break
		}
		class, field := spanAttrs(t.z, hasAttr)
		if class != "sub" {
			break
		}
		t.subField = "-" // a fact under the main one, not read
		if field != "" && !t.isTH {
			t.subField, t.sub = field, &strings.Builder{}
		}
	}
}

func (t *htmlTables) end(name string) {
	switch name {
	case "thead":
		t.inHead = false
	case "span":
		if t.sub != nil {
			if t.fields == nil {
				t.fields = map[string]string{}
			}
			t.fields[t.subField] = strings.TrimSpace(t.sub.String())
		}
		t.subField, t.sub = "", nil
	case "th", "td":
		if t.cell != nil && t.isTH {
			t.th = append(t.th, strings.TrimSpace(t.cell.String()))
		} else if t.cell != nil {
			t.td = append(t.td, strings.TrimSpace(t.cell.String()))
		}
		t.cell, t.sub, t.subField = nil, nil, ""
	case "tr":
		t.endRow()
	}
}

// endRow reads a finished row: a table's head, a summary pair, a stated figure, or a payout.
func (t *htmlTables) endRow() {
	switch {
	case t.inHead:
		t.idx = indexHeader(t.th)
	case len(t.th) == 1 && len(t.td) >= 1:
		t.rr.summary(t.th[0], t.td[0])
	case t.idx == nil && len(t.th) == 0 && len(t.td) == 3:
		t.rr.stated = append(t.rr.stated, [3]string{t.td[0], t.td[1], t.td[2]})
	case t.idx != nil && len(t.td) > 0:
		t.rowN++
		rowIdx, cells := withFields(t.idx, t.td, t.fields)
		t.rr.row("table row "+strconv.Itoa(t.rowN), rowIdx, cells)
	}
}

// spanAttrs reads a span's class and data-field.
func spanAttrs(z *html.Tokenizer, more bool) (class, field string) {
	for more {
		var k, v []byte
		k, v, more = z.TagAttr()
		switch string(k) {
		case "class":
			class = string(v)
		case "data-field":
			field = string(v)
		}
	}
	return class, field
}

// withFields adds a row's named facts to its cells, as columns of their own.
func withFields(idx map[string]int, cells []string, fields map[string]string) (map[string]int, []string) {
	if len(fields) == 0 {
		return idx, cells
	}
	out := make(map[string]int, len(idx)+len(fields))
	for k, v := range idx {
		out[k] = v
	}
	for f, v := range fields {
		out[f] = len(cells)
		cells = append(cells, v)
	}
	return out, cells
}
