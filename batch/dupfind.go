package batch

import (
	"bufio"
	"cmp"
	"container/heap"
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

// refBufferEntries bounds what the duplicate check holds in memory (768 KiB): past it, sorted
// runs go to a temporary file and are merged at the end, so memory stays flat at any length.
const refBufferEntries = 1 << 15

// mergeBufferBytes is shared by the readers of the runs during the merge; each gets at least
// minRunBuffer, so a file of many millions of rows still merges in a few MiB.
const (
	mergeBufferBytes = 1 << 20
	minRunBuffer     = 512
)

func compareRefEntries(a, b refEntry) int {
	if c := cmp.Compare(a.h1, b.h1); c != 0 {
		return c
	}
	if c := cmp.Compare(a.h2, b.h2); c != 0 {
		return c
	}
	return cmp.Compare(a.line, b.line)
}

// dupFinder finds references that appear more than once in a file, in bounded memory. Rows are
// only remembered while reading; duplicates are found after the last row, by sorting.
type dupFinder struct {
	dir   string // for the spill file; empty means os.TempDir()
	buf   []refEntry
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
	slices.SortFunc(d.buf, compareRefEntries)
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
		slices.SortFunc(d.buf, compareRefEntries)
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
		m, err := newRunMerger(d.spill, d.runs)
		if err != nil {
			return err
		}
		next = m.next
	}
	var (
		key   refEntry
		lines []int // of the current reference, reused: most references have one line
		cents int64
	)
	report := func() {
		if len(lines) > 1 {
			found(duplicateGroup{lines: slices.Clone(lines), cents: cents})
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
		if len(lines) == 0 || e.h1 != key.h1 || e.h2 != key.h2 {
			report()
			key, lines, cents = e, lines[:0], 0
		}
		lines = append(lines, int(e.line))
		cents += e.cents
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
	d.buf, d.runs = nil, nil
}

// runMerger yields the entries of every sorted run in one sorted stream.
type runMerger struct {
	cursors runHeap
}

type runCursor struct {
	r    *bufio.Reader
	head refEntry
}

func newRunMerger(f *os.File, runs []int64) (*runMerger, error) {
	size := max(minRunBuffer, mergeBufferBytes/len(runs))
	m := &runMerger{}
	var off int64
	for _, n := range runs {
		c := &runCursor{r: bufio.NewReaderSize(io.NewSectionReader(f, off, n*refEntrySize), size)}
		off += n * refEntrySize
		ok, err := c.advance()
		if err != nil {
			return nil, err
		}
		if ok {
			m.cursors = append(m.cursors, c)
		}
	}
	heap.Init(&m.cursors)
	return m, nil
}

func (c *runCursor) advance() (bool, error) {
	var b [refEntrySize]byte
	if _, err := io.ReadFull(c.r, b[:]); err == io.EOF {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("duplicate check: read back: %w", err)
	}
	c.head = refEntry{h1: binary.LittleEndian.Uint64(b[0:]), h2: binary.LittleEndian.Uint32(b[8:]),
		line: binary.LittleEndian.Uint32(b[12:]), cents: int64(binary.LittleEndian.Uint64(b[16:]))}
	return true, nil
}

func (m *runMerger) next() (refEntry, bool, error) {
	if len(m.cursors) == 0 {
		return refEntry{}, false, nil
	}
	c := m.cursors[0]
	e := c.head
	ok, err := c.advance()
	if err != nil {
		return refEntry{}, false, err
	}
	if ok {
		heap.Fix(&m.cursors, 0)
	} else {
		heap.Pop(&m.cursors)
	}
	return e, true, nil
}

type runHeap []*runCursor

func (h runHeap) Len() int           { return len(h) }
func (h runHeap) Less(i, j int) bool { return compareRefEntries(h[i].head, h[j].head) < 0 }
func (h runHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)        { *h = append(*h, x.(*runCursor)) }
func (h *runHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}
