package report

import (
	"archive/zip"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// The held rows give back every cell as it was added: its text byte for byte (empty, multi-byte,
// longer than one length byte holds) and its kind, with each row's attention flag, in order.
func TestHeldRowsGiveBackWhatWasAdded(t *testing.T) {
	rows := [][]cell{
		runCells(Row{Line: 2, Ref: "=HYPERLINK(1)", Recipient: "Siti Nurhaliza binti Tarudin", ProviderID: 7, Bank: "Maybank",
			Account: "000123456789", Amount: decimal.RequireFromString("1234.50"), State: StateReady, Message: "valid"}, nil),
		{},
		{text(""), code("0042"), integer(99999), {s: strings.Repeat("é", 300), kind: kindText}},
		runCells(Row{Line: 3, Ref: "R-2", AmountText: "12,3x", State: StateRejected, Message: strings.Repeat("bad; ", 100)}, nil),
	}
	var h heldRows
	for i, r := range rows {
		h.add(r, i%2 == 1)
	}
	i := 0
	err := h.each(func(cells []cell, attention bool) error {
		if !slices.Equal(cells, rows[i]) || attention != (i%2 == 1) {
			t.Errorf("held row %d: got %v (attention %v), want %v (attention %v)", i, cells, attention, rows[i], i%2 == 1)
		}
		i++
		return nil
	})
	if err != nil || i != len(rows) {
		t.Errorf("each gave %d rows and %v, want %d rows", i, err, len(rows))
	}
}

// A report of exactly XLSXListLimit rows lists every one of them in the XLSX, cell for cell as
// a short report does.
func TestXLSXOfListLimitRowsListsEveryRowAsWritten(t *testing.T) {
	rows := make([]Row, XLSXListLimit)
	for i := range rows {
		rows[i] = Row{Line: i + 2, Ref: "REF-" + strings.Repeat("9", i%7), Recipient: "=A1", ProviderID: int64(i % 3),
			Bank: "Maybank", Account: "0012", Amount: decimal.New(int64(i), -2), State: []string{StateReady, StateRejected}[i%2]}
	}
	ch := make(chan []Row, 1)
	ch <- rows
	close(ch)
	var got strings.Builder
	summary := func() Summary { return Summary{RunID: "x", Started: time.Unix(0, 0), Ended: time.Unix(0, 0)} }
	if err := writeRunXLSX(&got, ch, true, summary); err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	x, err := newXLSXStream(runTable())
	if err != nil {
		t.Fatal(err)
	}
	defer x.close()
	var buf []cell
	for _, r := range rows {
		buf = runCells(r, buf)
		if err := x.add(buf); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.finish(&want, runSummaryCells(summary())); err != nil {
		t.Fatal(err)
	}
	if g, w := zipPart(t, got.String(), "xl/worksheets/sheet1.xml"), zipPart(t, want.String(), "xl/worksheets/sheet1.xml"); g != w {
		t.Errorf("the Rows sheet of %d rows (%d bytes) differs from the sheet of the same rows written directly (%d bytes)", XLSXListLimit, len(g), len(w))
	}
}

func zipPart(t *testing.T, data, name string) string {
	t.Helper()
	zr, err := zip.NewReader(strings.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := zr.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
