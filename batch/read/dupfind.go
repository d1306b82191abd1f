package read

import (
	"cmp"
	"encoding/binary"
	"hash/maphash"
	"slices"

	"github.com/shopspring/decimal"
)

// refUse is one row's reference, kept as a 64-bit hash so that a file of a million rows costs
// 24 bytes a row and no string: two different references share a hash with a chance of about
// one in 10^7 for a million rows, and the only effect would be rejecting both rows, never paying one.
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
	blocks [][]refUse
	n      int
}

const refBlock = 1 << 15

// add records that line carries ref and added cents to the total (0 when the row was rejected
// for another reason).
func (d *dupFinder) add(ref string, line int, cents int64) {
	d.init()
	d.addHash(maphash.String(d.seed, ref), line, cents)
}

func (d *dupFinder) init() {
	if d.blocks == nil && d.n == 0 {
		d.seed = maphash.MakeSeed()
		d.blocks = make([][]refUse, 0, 8)
	}
}

// addHash records a row by a hash of its key made with the finder's seed.
func (d *dupFinder) addHash(hash uint64, line int, cents int64) {
	if d.n%refBlock == 0 {
		d.blocks = append(d.blocks, make([]refUse, 0, refBlock))
	}
	last := len(d.blocks) - 1
	d.blocks[last] = append(d.blocks[last], refUse{hash: hash, cents: cents, line: line})
	d.n++
}

// find lists every row of every duplicated reference, in line order (the lowest line of a
// reference names the next one; every other line names the lowest), and what those rows had
// added to the total.
func (d *dupFinder) find() ([]duplicateLine, decimal.Decimal) {
	uses := make([]refUse, 0, d.n)
	for _, b := range d.blocks {
		uses = append(uses, b...)
	}
	d.blocks = nil
	// By hash only: the few rows of one hash are put in line order below.
	slices.SortFunc(uses, func(a, b refUse) int { return cmp.Compare(a.hash, b.hash) })
	var out []duplicateLine
	removed := decimal.Zero
	for i := 0; i < len(uses); {
		j := i + 1
		for j < len(uses) && uses[j].hash == uses[i].hash {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(uses[i:j], func(a, b refUse) int { return a.line - b.line })
			for k := i; k < j; k++ {
				other := uses[i].line
				if k == i {
					other = uses[i+1].line
				}
				out = append(out, duplicateLine{line: uses[k].line, other: other})
				removed = removed.Add(decimal.New(uses[k].cents, -2))
			}
		}
		i = j
	}
	slices.SortFunc(out, func(a, b duplicateLine) int { return a.line - b.line })
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
	d.addHash(h.Sum64(), line, 0)
}
