package batch

import (
	"strings"
	"testing"

	"github.com/payout/payout/batch/read"
)

// Every reference RetryRef makes passes mayBeRetryRef, or a retry's row would not be checked
// against the payout it replaces.
func TestEveryRetryRefMayBeARetryRef(t *testing.T) {
	for _, root := range []string{"PAY-1", "X", "PAY-R", "PAY-R1", strings.Repeat("A", read.MaxRefLength), strings.Repeat("B", 61)} {
		for _, n := range []int{1, 2, 10, 123} {
			if ref := RetryRef(root, n); !mayBeRetryRef(ref) {
				t.Errorf("mayBeRetryRef(RetryRef(%q, %d) = %q) is false", root, n, ref)
			}
		}
	}
	for _, ref := range []string{"PAY-1", "PAY-R", "PAY-RX", "PAY-R1X", "R1", "PAY_R1", ""} {
		if mayBeRetryRef(ref) {
			t.Errorf("mayBeRetryRef(%q) is true", ref)
		}
	}
}
