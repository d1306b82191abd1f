package read

import (
	"container/heap"
	"encoding/binary"
	"hash/maphash"
	"math"
	"slices"
	"sort"

	"github.com/shopspring/decimal"
)

// refUse is one row's reference, kept as a 64-bit hash so that a file of a million rows costs
// 20 bytes a row and no string (12 for a payee, which keeps no amount): two different references
// share a hash with a chance of about one in 10^7 for a million rows, and the only effect would be
// rejecting both rows, never paying one.
type refUse struct {
	hash  uint64
	cents int64 // what the row added to the file's total; 0 when it was rejected for another reason
	line  int
}

// duplicateLine is a row whose reference another row of the file also has.
type duplicateLine struct {
	line, other int // other is another line with the same reference
}

// dupFinder finds references that appear more than once in a file: it records every row's
// reference hash, and sorts them once at the end. The hashes are kept in fixed blocks, so that a
// big file's are never copied as a growing slice would copy them.
type dupFinder struct {
	seed   maphash.Seed
	blocks []*hashBlock
	n      int
}

const refBlock = 1 << 13

// hashBlock holds up to refBlock rows column by column, with no padding between a row's fields:
// their hashes, their lines as offsets from the block's first, and, in a finder of references,
// what each row added to the total.
type hashBlock struct {
	base   int
	hashes []uint64
	offs   []uint32
	cents  []int64 // empty in a finder of payees
	sorted bool    // by hash: a block is sorted once it is full
}

func (b *hashBlock) Len() int           { return len(b.hashes) }
func (b *hashBlock) Less(i, j int) bool { return b.hashes[i] < b.hashes[j] }
func (b *hashBlock) Swap(i, j int) {
	b.hashes[i], b.hashes[j] = b.hashes[j], b.hashes[i]
	b.offs[i], b.offs[j] = b.offs[j], b.offs[i]
	if len(b.cents) > 0 {
		b.cents[i], b.cents[j] = b.cents[j], b.cents[i]
	}
}

func (b *hashBlock) use(i int) refUse {
	u := refUse{hash: b.hashes[i], line: b.base + int(b.offs[i])}
	if len(b.cents) > 0 {
		u.cents = b.cents[i]
	}
	return u
}

// add records that line carries ref and added cents to the total (0 when the row was rejected
// for another reason).
func (d *dupFinder) add(ref string, line int, cents int64) {
	d.init()
	b := d.block(line, true)
	b.cents = append(b.cents, cents)
	d.addHash(b, maphash.String(d.seed, ref), line)
}

func (d *dupFinder) init() {
	if d.blocks == nil && d.n == 0 {
		d.seed = maphash.MakeSeed()
	}
}

// block is the block that takes a row of line: the last one, or a new one when it is full or
// line lies out of its offsets' reach.
func (d *dupFinder) block(line int, amounts bool) *hashBlock {
	if n := len(d.blocks); n > 0 {
		b := d.blocks[n-1]
		if len(b.hashes) < refBlock && line >= b.base && line-b.base <= math.MaxUint32 {
			return b
		}
		// Sorted now, while the file is still being read, rather than all at once at its end.
		sort.Sort(b)
		b.sorted = true
	}
	b := &hashBlock{base: line, hashes: make([]uint64, 0, refBlock), offs: make([]uint32, 0, refBlock)}
	if amounts {
		b.cents = make([]int64, 0, refBlock)
	}
	d.blocks = append(d.blocks, b)
	return b
}

// addHash records a row of b by a hash of its key made with the finder's seed.
func (d *dupFinder) addHash(b *hashBlock, hash uint64, line int) {
	b.hashes = append(b.hashes, hash)
	b.offs = append(b.offs, uint32(line-b.base))
	d.n++
}

// find lists every row of every duplicated reference, in line order (the lowest line of a
// reference names the next one; every other line names the lowest), and what those rows had
// added to the total. Each block is sorted in place and the blocks are merged, so that the
// hashes are never copied: a copy of them all would double what the finder holds at its peak.
func (d *dupFinder) find() ([]duplicateLine, decimal.Decimal) {
	merged := make(blockMerge, 0, len(d.blocks))
	for _, b := range d.blocks {
		// By hash only: the few rows of one hash are put in line order below.
		if !b.sorted {
			sort.Sort(b)
		}
		if b.Len() > 0 {
			merged = append(merged, blockCursor{b, 0})
		}
	}
	d.blocks = nil
	heap.Init(&merged)
	var out []duplicateLine
	removed := decimal.Zero
	var same []refUse // the rows of one hash
	for {
		u, more := merged.next()
		if len(same) > 0 && (!more || u.hash != same[0].hash) {
			out, removed = appendDuplicates(out, removed, same)
			same = same[:0]
		}
		if !more {
			break
		}
		same = append(same, u)
	}
	slices.SortFunc(out, func(a, b duplicateLine) int { return a.line - b.line })
	return out, removed
}

// appendDuplicates adds the rows of one hash when there are more than one.
func appendDuplicates(out []duplicateLine, removed decimal.Decimal, same []refUse) ([]duplicateLine, decimal.Decimal) {
	if len(same) < 2 {
		return out, removed
	}
	slices.SortFunc(same, func(a, b refUse) int { return a.line - b.line })
	for k, u := range same {
		other := same[0].line
		if k == 0 {
			other = same[1].line
		}
		out = append(out, duplicateLine{line: u.line, other: other})
		removed = removed.Add(decimal.New(u.cents, -2))
	}
	return out, removed
}

// blockMerge yields the rows of blocks sorted by hash in hash order: a heap of the blocks' unread
// rows, each block with one, ordered by its next hash.
type blockMerge []blockCursor

type blockCursor struct {
	b *hashBlock
	i int // the next row
}

func (m blockMerge) Len() int           { return len(m) }
func (m blockMerge) Less(i, j int) bool { return m[i].b.hashes[m[i].i] < m[j].b.hashes[m[j].i] }
func (m blockMerge) Swap(i, j int)      { m[i], m[j] = m[j], m[i] }
func (m *blockMerge) Push(x any)        { *m = append(*m, x.(blockCursor)) }
func (m *blockMerge) Pop() any {
	old := *m
	last := old[len(old)-1]
	*m = old[:len(old)-1]
	return last
}

// next takes the row of the lowest hash left; false when none is.
func (m *blockMerge) next() (refUse, bool) {
	if len(*m) == 0 {
		return refUse{}, false
	}
	top := &(*m)[0]
	u := top.b.use(top.i)
	if top.i++; top.i == top.b.Len() {
		heap.Pop(m)
	} else {
		heap.Fix(m, 0)
	}
	return u, true
}

// addPayee records that line pays account at provider the amount sen (in sen), for the repeat check.
func (d *dupFinder) addPayee(account string, provider, sen int64, line int) {
	d.init()
	var h maphash.Hash
	h.SetSeed(d.seed)
	h.WriteString(account)
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(provider))
	binary.LittleEndian.PutUint64(b[8:], uint64(sen))
	h.Write(b[:])
	d.addHash(d.block(line, false), h.Sum64(), line)
}
