package read

import (
	"cmp"
	"encoding/binary"
	"hash/maphash"
	"math"
	"math/bits"
	"slices"

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
// reference hash, and at the end sorts only the rows whose hash another row may share (find).
// The hashes are kept in fixed blocks, so that a big file's are never copied as a growing slice
// would copy them.
type dupFinder struct {
	seed   maphash.Seed
	blocks []*hashBlock
	n      int // rows added
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
// added to the total. Duplicates are rare: two bitsets of 8 to 16 bits a row, indexed by the
// top bits of a hash, pick out the rows whose hash another row may share (every duplicate, and
// about one row in ten besides), and only those are sorted. The finder holds nothing after it.
func (d *dupFinder) find() ([]duplicateLine, decimal.Decimal) {
	blocks, rows := d.blocks, d.n
	d.blocks, d.n = nil, 0
	shift := 64 - bits.Len(uint(8*rows))
	seen := make([]uint64, 1<<(64-shift)/64+1)
	twice := make([]uint64, len(seen))
	for _, b := range blocks {
		for _, h := range b.hashes {
			w, bit := slot(h, shift)
			if seen[w]&bit != 0 {
				twice[w] |= bit
			}
			seen[w] |= bit
		}
	}
	seen = nil
	var picked int
	for _, b := range blocks {
		for _, h := range b.hashes {
			if w, bit := slot(h, shift); twice[w]&bit != 0 {
				picked++
			}
		}
	}
	maybe := make([]refUse, 0, picked)
	for _, b := range blocks {
		for i, h := range b.hashes {
			if w, bit := slot(h, shift); twice[w]&bit != 0 {
				maybe = append(maybe, b.use(i))
			}
		}
	}
	// By hash only: the few rows of one hash are put in line order below.
	slices.SortFunc(maybe, func(a, b refUse) int { return cmp.Compare(a.hash, b.hash) })
	var out []duplicateLine
	removed := decimal.Zero
	for len(maybe) > 0 {
		n := 1
		for n < len(maybe) && maybe[n].hash == maybe[0].hash {
			n++
		}
		out, removed = appendDuplicates(out, removed, maybe[:n])
		maybe = maybe[n:]
	}
	slices.SortFunc(out, func(a, b duplicateLine) int { return a.line - b.line })
	return out, removed
}

// slot is the word and bit of find's bitsets for hash h: its top bits.
func slot(h uint64, shift int) (int, uint64) {
	i := h >> shift
	return int(i / 64), 1 << (i % 64)
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
