package read

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/shopspring/decimal"
)

// dupFinderRows fills a finder with n rows over several blocks: every 997th row repeats the
// reference of a row a block or more earlier, and every 5003rd of those once more, so that
// duplicates lie in the same block, across blocks, and in threes. It returns what find must
// report, worked out with a map.
func dupFinderRows(d *dupFinder, n int) ([]duplicateLine, decimal.Decimal) {
	lines := map[string][]int{}
	cents := map[int]int64{}
	for i := range n {
		line := i + 2
		ref := fmt.Sprintf("REF-%d", i)
		switch {
		case i > refBlock && i%997 == 0:
			ref = fmt.Sprintf("REF-%d", i-refBlock-i%13)
		case i%5003 == 0 && i > 0:
			ref = fmt.Sprintf("REF-%d", i-1)
		}
		cents[line] = int64(i%700) * 101
		d.add(ref, line, cents[line])
		lines[ref] = append(lines[ref], line)
	}
	var want []duplicateLine
	removed := decimal.Zero
	for _, ls := range lines {
		if len(ls) < 2 {
			continue
		}
		for k, l := range ls {
			other := ls[0]
			if k == 0 {
				other = ls[1]
			}
			want = append(want, duplicateLine{line: l, other: other})
			removed = removed.Add(decimal.New(cents[l], -2))
		}
	}
	slices.SortFunc(want, func(a, b duplicateLine) int { return a.line - b.line })
	return want, removed
}

func TestDupFinderFindsDuplicatesWithinAndAcrossBlocks(t *testing.T) {
	t.Parallel()
	var d dupFinder
	want, wantRemoved := dupFinderRows(&d, 12*refBlock+1234)
	if len(want) < 100 {
		t.Fatalf("the rows hold only %d duplicated lines: the test checks too little", len(want))
	}
	got, removed := d.find()
	if !slices.Equal(got, want) {
		t.Errorf("find reported %d duplicated lines, want %d; first got %v, want %v", len(got), len(want), got[:min(5, len(got))], want[:5])
	}
	if !removed.Equal(wantRemoved) {
		t.Errorf("removed %s, want %s", removed, wantRemoved)
	}
}

// find must not copy the hashes it holds: a copy would double the finder's memory at the end of
// a large file, when the process holds the most. Its bitsets and the rows they pick out take
// about a quarter of what it holds.
func TestDupFinderFindCopiesNoHashes(t *testing.T) {
	// Not in parallel: it reads the heap of this process, which tests beside it would fill.
	var d dupFinder
	const n = 32 * refBlock
	dupFinderRows(&d, n)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d.find()
	runtime.ReadMemStats(&after)
	held := uint64(n * 20) // bytes of a reference: hash, line offset, amount
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > held/3 {
		t.Errorf("find allocated %d bytes for %d rows' hashes (%d bytes): it copies them", allocated, n, held)
	}
}

// Lines are kept as offsets from their block's first: a line beyond an offset's reach, or before
// the block's first, starts a block of its own and is reported as it was added.
func TestDupFinderKeepsLinesBeyondAnOffsetsReach(t *testing.T) {
	t.Parallel()
	var d dupFinder
	far := 2 + math.MaxUint32 + 10
	for _, r := range []struct {
		ref  string
		line int
	}{{"A", 2}, {"B", 3}, {"B", far}, {"C", far + 1}, {"A", 5}} {
		d.add(r.ref, r.line, 100)
	}
	got, removed := d.find()
	want := []duplicateLine{{2, 5}, {3, far}, {5, 2}, {far, 3}}
	if !slices.Equal(got, want) || !removed.Equal(decimal.New(4, 0)) {
		t.Errorf("find reported %v and removed %s, want %v and 4", got, removed, want)
	}
}
