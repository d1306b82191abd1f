package ledger_test

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/ledger"
)

func TestAmountAsWritten(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string // empty: no number
	}{
		{"1,250.00", "1250"},
		{"RM 1,250.50", "1250.5"},
		{"MYR 1,000,000.01", "1000000.01"},
		{"150.00", "150"},
		{"0", "0"},
		{"-5", "-5"},
		{"RM -5.00", "-5"},
		{"-RM 1,250.00", "-1250"},
		{"10.001", "10.001"},
		{"1,250.005", "1250.005"},
		{"1000000000000", "1000000000000"},
		{"1.250,00", ""},
		{"1,25", ""},
		{"12,50.00", ""},
		{",250", ""},
		{"1e3", ""},
		{"(50.00)", ""},
		{"one hundred", ""},
		{"", ""},
		{"RM", ""},
		{"5.x", ""},
		{".5", "0.5"},
		{"5.", "5"},
		{"myr12.5", "12.5"},
		{" 007.10 ", "7.1"},
		{"--5", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := ledger.AmountAsWritten(tt.in)
			if tt.want == "" {
				if ok {
					t.Fatalf("AmountAsWritten(%q) = %v, true; want no number", tt.in, got)
				}
				return
			}
			if !ok || !got.Equal(decimal.RequireFromString(tt.want)) {
				t.Fatalf("AmountAsWritten(%q) = %v, %v; want %s", tt.in, got, ok, tt.want)
			}
		})
	}
}
