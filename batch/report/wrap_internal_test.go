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
