package report

import (
	"testing"

	"github.com/shopspring/decimal"
)

// fixed2 must write exactly what decimal's StringFixed(2) writes, for every amount it takes.
func TestFixed2IsStringFixed(t *testing.T) {
	for _, s := range []string{"0", "1", "-1", "0.5", "-0.05", "12.3", "100", "1234567.89", "-999999999999.99",
		"92233720368547758.07", "1e3", "7e1", "0.01", "-0.01", "10.10"} {
		d := decimal.RequireFromString(s)
		got, ok := fixed2(d)
		if want := d.StringFixed(2); ok && got != want {
			t.Errorf("fixed2(%s) = %q, want %q", s, got, want)
		}
		if got := amountString(d); got != d.StringFixed(2) {
			t.Errorf("amountString(%s) = %q, want %q", s, got, d.StringFixed(2))
		}
	}
	for c := int64(-100_000); c <= 100_000; c += 7 {
		d := decimal.New(c, -2)
		if got, _ := fixed2(d); got != d.StringFixed(2) {
			t.Fatalf("fixed2(%s) = %q, want %q", d, got, d.StringFixed(2))
		}
	}
}
