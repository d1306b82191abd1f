package report

import "testing"

// TestWrappedLines counts lines as a spreadsheet wraps a cell: at spaces, a word longer than the
// line broken where the line ends, and at every newline.
func TestWrappedLines(t *testing.T) {
	for _, tc := range []struct {
		name    string
		text    string
		perLine int
		want    int
	}{
		{"fits", "Tan Wei Ming", 12, 1},
		{"words wrap whole", "Ledger amount (MYR)", 10, 3},
		{"a word longer than a line", "PAY-2026-11-000146", 10, 2},
		{"a long word after a short one", "x PAY-2026-11-000146", 10, 3},
		{"newlines", "one\ntwo\n\nfour", 20, 4},
		{"empty", "", 5, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := wrappedLines(tc.text, tc.perLine); got != tc.want {
				t.Errorf("wrappedLines(%q, %d) = %d, want %d", tc.text, tc.perLine, got, tc.want)
			}
		})
	}
}

// TestPrintedColumnsFitThePrintWidth: the columns each report prints add up to at most
// printWidthChars, which keeps the printed text at 8 pt or more (TestReportsPrintReadablyOnA4Landscape
// checks it in LibreOffice); every sheet column shows a cell of the CSV's, each once.
func TestPrintedColumnsFitThePrintWidth(t *testing.T) {
	for name, tbl := range map[string]table{"run": runTable(), "reconcile": reconTable()} {
		printed := tbl.sheet
		if tbl.printed > 0 {
			printed = tbl.sheet[:tbl.printed]
		}
		var width float64
		for _, c := range printed {
			width += c.width
		}
		if width > printWidthChars {
			t.Errorf("%s: the printed columns are %.0f characters wide, over %d", name, width, printWidthChars)
		}
		seen := map[int]bool{}
		for _, c := range tbl.sheet {
			if c.from < 0 || c.from >= len(tbl.header) || seen[c.from] {
				t.Errorf("%s: sheet column %q shows CSV column %d: out of range or twice", name, c.title, c.from)
			}
			seen[c.from] = true
		}
		if len(seen) != len(tbl.header) {
			t.Errorf("%s: the sheet shows %d of the CSV's %d columns", name, len(seen), len(tbl.header))
		}
	}
}
