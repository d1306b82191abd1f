package report

import "encoding/binary"

// packedRows keeps rows of strings in one buffer, each field as its length and its bytes: a row
// takes the bytes of its text and a few more, where a struct of strings and the values it keeps
// alive take several hundred. Reports hold the rows they write at the end this way.
type packedRows struct {
	buf  []byte
	ends []int // where each row ends in buf
}

func (p *packedRows) add(fields ...string) {
	for _, f := range fields {
		p.buf = binary.AppendUvarint(p.buf, uint64(len(f)))
		p.buf = append(p.buf, f...)
	}
	p.ends = append(p.ends, len(p.buf))
}

func (p *packedRows) len() int { return len(p.ends) }

// row gives row i's fields in fields, reused.
func (p *packedRows) row(i int, fields []string) []string {
	start := 0
	if i > 0 {
		start = p.ends[i-1]
	}
	b := p.buf[start:p.ends[i]]
	fields = fields[:0]
	for len(b) > 0 {
		size, n := binary.Uvarint(b)
		b = b[n:]
		fields = append(fields, string(b[:size]))
		b = b[size:]
	}
	return fields
}

// heldRows keeps an XLSX report's first rows, until it is known whether they are all listed.
// A row's first field holds its attention flag and its cells' kinds, a byte each.
type heldRows struct{ packedRows }

func (h *heldRows) add(cells []cell, attention bool) {
	fields := make([]string, 0, len(cells)+1)
	meta := make([]byte, 0, len(cells)+1)
	if attention {
		meta = append(meta, 1)
	} else {
		meta = append(meta, 0)
	}
	for _, c := range cells {
		meta = append(meta, byte(c.kind))
	}
	fields = append(fields, string(meta))
	for _, c := range cells {
		fields = append(fields, c.s)
	}
	h.packedRows.add(fields...)
}

// each calls fn with every held row's cells, in the order they were added; cells is reused.
func (h *heldRows) each(fn func(cells []cell, attention bool) error) error {
	var fields []string
	var cells []cell
	for i := range h.len() {
		fields = h.row(i, fields)
		meta := fields[0]
		cells = cells[:0]
		for j, s := range fields[1:] {
			cells = append(cells, cell{s: s, kind: cellKind(meta[1+j])})
		}
		if err := fn(cells, meta[0] == 1); err != nil {
			return err
		}
	}
	return nil
}
