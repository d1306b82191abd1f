package report

import "encoding/binary"

// heldRows keeps an XLSX report's first rows, until it is known whether they are all listed,
// packed into one buffer as their cells' text: a row takes the bytes of its text and a few
// more, where a Row and the values it keeps alive take several hundred.
type heldRows struct {
	buf []byte // per row: its attention flag, its cell count, then each cell's kind, length and text
	n   int
}

func (h *heldRows) add(cells []cell, attention bool) {
	flag := byte(0)
	if attention {
		flag = 1
	}
	h.buf = append(h.buf, flag)
	h.buf = binary.AppendUvarint(h.buf, uint64(len(cells)))
	for _, c := range cells {
		h.buf = binary.AppendUvarint(h.buf, uint64(c.kind))
		h.buf = binary.AppendUvarint(h.buf, uint64(len(c.s)))
		h.buf = append(h.buf, c.s...)
	}
	h.n++
}

// each calls fn with every held row's cells, in the order they were added; cells is reused.
func (h *heldRows) each(fn func(cells []cell, attention bool) error) error {
	var cells []cell
	b := h.buf
	next := func() int {
		v, n := binary.Uvarint(b)
		b = b[n:]
		return int(v)
	}
	for range h.n {
		attention := b[0] == 1
		b = b[1:]
		cells = cells[:0]
		for range next() {
			kind := cellKind(next())
			size := next()
			cells = append(cells, cell{s: string(b[:size]), kind: kind})
			b = b[size:]
		}
		if err := fn(cells, attention); err != nil {
			return err
		}
	}
	return nil
}
