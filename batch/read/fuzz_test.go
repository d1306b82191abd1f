package read_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/payout/payout/batch/read"
	"github.com/shopspring/decimal"
)

// FuzzParseAmount: never panics, never accepts a non-positive amount or one with more than two
// decimals. Seed corpus: testdata/fuzz/FuzzParseAmount.
func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"1250", "1,250.00", "RM 1,250.50", "MYR0.01", "1.250,00", "1,25", "-1", "(5)", "0.001", "1e3", ".", "RM", "\u221210"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := read.ParseAmount(s)
		if err != nil {
			return
		}
		if !d.IsPositive() {
			t.Fatalf("ParseAmount(%q) = %s, not positive", s, d)
		}
		if !d.Equal(d.Round(2)) {
			t.Fatalf("ParseAmount(%q) = %s, more than two decimals", s, d)
		}
		if d.GreaterThanOrEqual(decimal.New(1, 12)) {
			t.Fatalf("ParseAmount(%q) = %s, too large", s, d)
		}
	})
}

// FuzzCSVReader: never panics; a row it yields has a line after the header's.
func FuzzCSVReader(f *testing.F) {
	const header = "external_invoice_ref,recipient_reference,bank,third_party_account_no,amount\n"
	for _, s := range []string{
		header + "A1,Tan,Maybank,0123456789,10\n",
		"\ufeff" + header + "A1,\"Tan, W\nM\",Maybank,0123456789,\"1,250.00\"\r\n\r\n",
		header + "A1,Tan \"x\",Maybank,1,1\n",
		"a,b\n1,2\n",
		header + "A1,\xe9,Maybank,1,1\n",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rd, err := read.NewCSVReader(strings.NewReader(s), "fuzz.csv", read.Options{MaxRows: 1000})
		if err != nil {
			return
		}
		defer rd.Close()
		v := read.NewValidator(read.ValidateOptions{})
		for {
			row, err := rd.Next()
			if errors.Is(err, io.EOF) || err != nil {
				break
			}
			if row.Line < 2 {
				t.Fatalf("row line %d", row.Line)
			}
			v.Check(row)
		}
		found := v.Finish()
		for _, d := range found.Duplicates {
			if !errors.Is(d, read.ErrRefDuplicate) || d.Line < 2 {
				t.Fatalf("duplicate finding %v", d)
			}
		}
	})
}
