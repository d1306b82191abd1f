package retry

import (
	"strings"
	"testing"

	"github.com/payout/payout/batch/read"
)

// Every reference Ref makes passes MayBeRef, or a retry's row would not be checked
// against the payout it replaces.
func TestEveryRefMayBeARef(t *testing.T) {
	t.Parallel()
	for _, root := range []string{"PAY-1", "X", "PAY-R", "PAY-R1", strings.Repeat("A", read.MaxRefLength), strings.Repeat("B", 61)} {
		for _, n := range []int{1, 2, 10, 123} {
			if ref := Ref(root, n); !MayBeRef(ref) {
				t.Errorf("MayBeRef(Ref(%q, %d) = %q) is false", root, n, ref)
			}
		}
	}
	for _, ref := range []string{"PAY-1", "PAY-R", "PAY-RX", "PAY-R1X", "R1", "PAY_R1", ""} {
		if MayBeRef(ref) {
			t.Errorf("MayBeRef(%q) is true", ref)
		}
	}
}
