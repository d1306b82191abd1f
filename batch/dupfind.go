package batch

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
)

// refEntry stands for one row's reference: 96 bits of two seeded hashes (a false duplicate is
// as likely as guessing a 96-bit key), the row's line, and the cents it added to the file's
// total (0 when the row was rejected for another reason), so that a duplicate can be taken out
// of the total again.
type refEntry struct {
	h1    uint64
	h2    uint32
	line  uint32
	cents int64
}

const refEntrySize = 24

// refBufferEntries bounds what the duplicate check holds in memory (384 KiB, and as much again
// for the sort's scratch): past it, sorted runs go to a temporary file and are merged at the
// end, so memory stays flat at any length.
const refBufferEntries = 1 << 14

// mergeBufferBytes is shared by the readers of the runs during the merge (twice: the bytes read
// and the entries decoded from them); each run gets at least minRunBuffer, so a file of many
// millions of rows still merges in a few MiB.
const (
	mergeBufferBytes = 256 << 10
	minRunBuffer     = 32 * refEntrySize
)

// compareRefEntries orders a group of entries that share h1: by reference, then line.
func compareRefEntries(a, b refEntry) int {
	if c := cmp.Compare(a.h2, b.h2); c != 0 {
		return c
	}
	return cmp.Compare(a.line, b.line)
}

// sortByH1 is a stable LSD radix sort of entries by h1, a byte at a time through scratch (of
// the same length): several times faster than a comparison sort on random 64-bit keys.
// Equal keys keep their order.
func sortByH1(entries, scratch []refEntry) {
	src, dst := entries, scratch[:len(entries)]
	for shift := uint(0); shift < 64; shift += 8 {
		var count [256]int
		for i := range src {
			count[byte(src[i].h1>>shift)]++
		}
		pos := 0
		for b, c := range count {
			count[b] = pos
			pos += c
		}
		for i := range src {
			b := byte(src[i].h1 >> shift)
			dst[count[b]] = src[i]
			count[b]++
		}
		src, dst = dst, src
	}
	// Eight passes: the sorted entries are back in entries.
}

// dupFinder finds references that appear more than once in a file, in bounded memory. Rows are
// only remembered while reading; duplicates are found after the last row, by sorting.
type dupFinder struct {
	dir   string // for the spill file; empty means os.TempDir()
	buf   []refEntry
	tmp   []refEntry // the radix sort's scratch, once the buffer spills
	spill *os.File
	path  string // of the spill file, while it could not be unlinked yet
	w     *bufio.Writer
	runs  []int64 // entries in each sorted run of the spill file, in file order
	err   error   // the first spill failure, reported by finish
}

func (d *dupFinder) add(e refEntry) {
	if d.err != nil {
		return
	}
	d.buf = append(d.buf, e)
	if len(d.buf) == refBufferEntries {
		d.err = d.flush()
	}
}

// flush writes the buffer as one sorted run.
func (d *dupFinder) flush() error {
	if d.spill == nil {
		f, err := os.CreateTemp(d.dir, "payout-refs-*.tmp")
		if err != nil {
			return fmt.Errorf("duplicate check: %w", err)
		}
		d.spill, d.w = f, bufio.NewWriterSize(f, 64<<10)
		// Unlinked at once, so that nothing is left behind whatever happens to the process.
		if os.Remove(f.Name()) != nil {
			d.path = f.Name()
		}
	}
	if d.tmp == nil {
		d.tmp = make([]refEntry, refBufferEntries)
	}
	sortByH1(d.buf, d.tmp)
	var b [refEntrySize]byte
	for _, e := range d.buf {
		binary.LittleEndian.PutUint64(b[0:], e.h1)
		binary.LittleEndian.PutUint32(b[8:], e.h2)
		binary.LittleEndian.PutUint32(b[12:], e.line)
		binary.LittleEndian.PutUint64(b[16:], uint64(e.cents))
		if _, err := d.w.Write(b[:]); err != nil {
			return fmt.Errorf("duplicate check: %w", err)
		}
	}
	d.runs = append(d.runs, int64(len(d.buf)))
	d.buf = d.buf[:0]
	return nil
}

// duplicateGroup is every line that carries one reference, in line order, with the cents those
// lines added to the total.
type duplicateGroup struct {
	lines []int
	cents int64
}

// finish calls found for each reference that appears more than once.
func (d *dupFinder) finish(found func(duplicateGroup)) error {
	defer d.close()
	if d.err != nil {
		return d.err
	}
	var next func() (refEntry, bool, error)
	if d.spill == nil {
		sortByH1(d.buf, make([]refEntry, len(d.buf)))
		i := 0
		next = func() (refEntry, bool, error) {
			if i == len(d.buf) {
				return refEntry{}, false, nil
			}
			i++
			return d.buf[i-1], true, nil
		}
	} else {
		if len(d.buf) > 0 {
			if err := d.flush(); err != nil {
				return err
			}
		}
		if err := d.w.Flush(); err != nil {
			return fmt.Errorf("duplicate check: %w", err)
		}
		d.buf, d.tmp = nil, nil // the merge needs neither: let them go before its buffers come

		m, err := newRunMerger(d.spill, d.runs)
		if err != nil {
			return err
		}
		next = m.next
	}
	// Entries arrive sorted by h1; those that share it (one reference on several lines, or,
	// once in 2^64, two references) are sorted by h2 and line and told apart by h2.
	var same []refEntry // reused: most references have one line
	report := func() {
		if len(same) < 2 {
			return
		}
		slices.SortFunc(same, compareRefEntries)
		for i := 0; i < len(same); {
			j := i + 1
			for j < len(same) && same[j].h2 == same[i].h2 {
				j++
			}
			if j-i > 1 {
				g := duplicateGroup{lines: make([]int, 0, j-i)}
				for _, e := range same[i:j] {
					g.lines = append(g.lines, int(e.line))
					g.cents += e.cents
				}
				found(g)
			}
			i = j
		}
	}
	for {
		e, ok, err := next()
		if err != nil {
			return err
		}
		if !ok {
			report()
			return nil
		}
		if len(same) > 0 && e.h1 != same[0].h1 {
			report()
			same = same[:0]
		}
		same = append(same, e)
	}
}

func (d *dupFinder) close() {
	if d.spill != nil {
		d.spill.Close()
		if d.path != "" {
			os.Remove(d.path)
		}
		d.spill, d.w, d.path = nil, nil, ""
	}
	d.buf, d.tmp, d.runs = nil, nil, nil
}

// runMerger yields the entries of every sorted run in one stream sorted by h1, through a
// binary min-heap of the runs' next entries.
type runMerger struct {
	heap []*runCursor
}

// runCursor reads one run a block of entries at a time.
type runCursor struct {
	r     io.Reader
	raw   []byte
	block []refEntry
	pos   int // of the next entry in block
	head  refEntry
}

func newRunMerger(f *os.File, runs []int64) (*runMerger, error) {
	entries := max(minRunBuffer, mergeBufferBytes/len(runs)) / refEntrySize
	m := &runMerger{}
	var off int64
	for _, n := range runs {
		c := &runCursor{r: io.NewSectionReader(f, off, n*refEntrySize), raw: make([]byte, entries*refEntrySize),
			block: make([]refEntry, 0, entries)}
		off += n * refEntrySize
		ok, err := c.advance()
		if err != nil {
			return nil, err
		}
		if ok {
			m.heap = append(m.heap, c)
		}
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m, nil
}

// advance moves head to the run's next entry, reading a block when the last is used up.
func (c *runCursor) advance() (bool, error) {
	if c.pos == len(c.block) {
		n, err := io.ReadFull(c.r, c.raw)
		if err == io.EOF {
			return false, nil
		}
		if err != nil && err != io.ErrUnexpectedEOF {
			return false, fmt.Errorf("duplicate check: read back: %w", err)
		}
		if n%refEntrySize != 0 {
			return false, fmt.Errorf("duplicate check: read back: %d bytes, not whole entries", n)
		}
		c.block, c.pos = c.block[:n/refEntrySize], 0
		for i := range c.block {
			b := c.raw[i*refEntrySize:]
			c.block[i] = refEntry{h1: binary.LittleEndian.Uint64(b[0:]), h2: binary.LittleEndian.Uint32(b[8:]),
				line: binary.LittleEndian.Uint32(b[12:]), cents: int64(binary.LittleEndian.Uint64(b[16:]))}
		}
	}
	c.head = c.block[c.pos]
	c.pos++
	return true, nil
}

func (m *runMerger) next() (refEntry, bool, error) {
	if len(m.heap) == 0 {
		return refEntry{}, false, nil
	}
	c := m.heap[0]
	e := c.head
	ok, err := c.advance()
	if err != nil {
		return refEntry{}, false, err
	}
	if !ok {
		last := len(m.heap) - 1
		m.heap[0] = m.heap[last]
		m.heap = m.heap[:last]
	}
	m.down(0)
	return e, true, nil
}

func (m *runMerger) down(i int) {
	h := m.heap
	for {
		least, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && h[l].head.h1 < h[least].head.h1 {
			least = l
		}
		if r < len(h) && h[r].head.h1 < h[least].head.h1 {
			least = r
		}
		if least == i {
			return
		}
		h[i], h[least] = h[least], h[i]
		i = least
	}
}
