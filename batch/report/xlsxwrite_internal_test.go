package report

import (
	"fmt"
	"testing"

	"github.com/shopspring/decimal"
)

// writeSizes records the size of each write it takes.
type writeSizes struct{ total, largest int }

func (w *writeSizes) Write(p []byte) (int, error) {
	w.total += len(p)
	w.largest = max(w.largest, len(p))
	return len(p), nil
}

// TestXLSXGoesOutAsItIsZipped: a workbook is written in small pieces as it is compressed, never
// built whole in memory and written at once, so that a report's memory does not grow with its rows.
func TestXLSXGoesOutAsItIsZipped(t *testing.T) {
	x, err := newXLSXStream(reconTable())
	if err != nil {
		t.Fatal(err)
	}
	defer x.close()
	var buf []cell
	for i := range 40_000 {
		r := ReconRow{Ref: fmt.Sprintf("Z-%07d", i), Line: i + 2, RunID: "run", Recipient: fmt.Sprintf("Employee %d", i),
			Account: fmt.Sprintf("1%011d", i*7919), LedgerState: StateSubmitted, LedgerAmount: decimal.New(int64(i), -2)}
		buf = reconCells(r, buf)
		if err := x.add(buf); err != nil {
			t.Fatal(err)
		}
	}
	var w writeSizes
	if err := x.finish(&w, nil); err != nil {
		t.Fatal(err)
	}
	if w.total < 1<<20 || w.largest > 64<<10 {
		t.Errorf("workbook of %d bytes written with a largest write of %d bytes: want it written as it is zipped, in pieces of 64 KiB at most", w.total, w.largest)
	}
}
