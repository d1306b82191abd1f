package read

import (
	"slices"
	"strings"

	"github.com/shopspring/decimal"
)

// firstUse is where a reference was first seen in a file.
type firstUse struct {
	line  int
	cents int64 // what that line added to the file's total; 0 when it was rejected
}

// duplicateLine is a row whose reference another row of the file also has.
type duplicateLine struct {
	line, other int // other is another line with the same reference
}

// dupFinder finds references that appear more than once in a file. It keeps every reference
// with its first line, and takes each row of a duplicated reference out of the total as soon as
// the reference is seen again, so that --max-total is held to the rows that can be paid.
type dupFinder struct {
	seen    map[string]firstUse
	dups    map[string][]int // every line of each reference seen more than once
	removed decimal.Decimal  // what the rows of duplicated references had added to the total
}

// add records that line carries ref and added cents to the total (0 when the row was rejected
// for another reason).
func (d *dupFinder) add(ref string, line int, cents int64) {
	if d.seen == nil {
		d.seen, d.dups = make(map[string]firstUse), make(map[string][]int)
	}
	first, again := d.seen[ref]
	if !again {
		// A copy: ref may share its bytes with the whole record the reader returned.
		d.seen[strings.Clone(ref)] = firstUse{line: line, cents: cents}
		return
	}
	lines := d.dups[ref]
	if lines == nil {
		lines = []int{first.line}
		d.remove(first.cents)
	}
	d.dups[ref] = append(lines, line)
	d.remove(cents)
}

func (d *dupFinder) remove(cents int64) {
	if cents != 0 {
		d.removed = d.removed.Add(decimal.New(cents, -2))
	}
}

// lines lists every row of every duplicated reference, in line order. The lowest line of a
// reference names the next one; every other line names the lowest.
func (d *dupFinder) lines() []duplicateLine {
	var out []duplicateLine
	for _, lines := range d.dups {
		slices.Sort(lines)
		for i, line := range lines {
			other := lines[0]
			if i == 0 {
				other = lines[1]
			}
			out = append(out, duplicateLine{line: line, other: other})
		}
	}
	slices.SortFunc(out, func(a, b duplicateLine) int { return a.line - b.line })
	return out
}
