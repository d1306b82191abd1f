package read

import (
	"math"
	"testing"

	"github.com/shopspring/decimal"
)

// A Total is exact to the sen: past what int64 sen can hold, with amounts of every shape
// ParseAmount returns, and with one of more decimals than it allows.
func TestTotalIsExact(t *testing.T) {
	t.Parallel()
	var total Total
	want := decimal.Zero
	add := func(s string, wantSen int64) {
		t.Helper()
		d := decimal.RequireFromString(s)
		if sen := total.Add(d); sen != wantSen {
			t.Errorf("Add(%s) = %d sen, want %d", s, sen, wantSen)
		}
		want = want.Add(d)
	}
	big := "999999999999.99" // the largest amount ParseAmount takes
	for range 2 * int(math.MaxInt64/99999999999999) {
		add(big, 99999999999999)
	}
	for _, a := range []string{"1", "1.5", "0.07", "12.30", "1000"} {
		add(a, decimal.RequireFromString(a).Shift(2).IntPart())
	}
	add("0.001", 0)
	add("-2.50", -250)
	if got := total.Decimal(); !got.Equal(want) {
		t.Errorf("total %s, want %s", got, want)
	}
	var zero Total
	if !zero.Decimal().IsZero() {
		t.Errorf("zero Total is %s", zero.Decimal())
	}
}
