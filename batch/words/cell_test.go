package words_test

import (
	"testing"

	"github.com/payout/payout/batch/words"
)

func TestUnneutralizeUndoesNeutralize(t *testing.T) {
	for _, s := range []string{"", "Aminah", "=TODAY()", " +60123", "-5", "@SUM(A1)", "＝1", "'quoted", "'", "\t=x"} {
		n := words.Neutralize(s)
		if got := words.Unneutralize(n); got != s {
			t.Errorf("Unneutralize(Neutralize(%q) = %q) = %q", s, n, got)
		}
	}
	// Text that is a quote before a formula reads as the formula: what a spreadsheet shows.
	if got := words.Unneutralize("'=1+1"); got != "=1+1" {
		t.Errorf("Unneutralize(%q) = %q", "'=1+1", got)
	}
	// A quote before text that is no formula is the user's own: it stays.
	if got := words.Unneutralize("'Connor"); got != "'Connor" {
		t.Errorf("Unneutralize(%q) = %q", "'Connor", got)
	}
}
