package read_test

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/payout/payout/batch/read"
)

// readAllRows reads a file's rows, failing the test on any error.
func readAllRows(tb testing.TB, path string, opts read.Options) []read.Row {
	tb.Helper()
	rd, err := read.OpenFile(path, opts)
	if err != nil {
		tb.Fatal(err)
	}
	defer rd.Close()
	var rows []read.Row
	for {
		row, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return rows
		}
		if err != nil {
			tb.Fatal(err)
		}
		rows = append(rows, row)
	}
}

// Files saved by LibreOffice Calc, not by excelize: what accountants really send.
func TestXLSXFromLibreOffice(t *testing.T) {
	t.Parallel()
	t.Run("accounts imported as numbers are rejected", func(t *testing.T) {
		rows := readAllRows(t, "../../testdata/libreoffice/accounts-as-numbers.xlsx", read.Options{})
		rejected := 0
		for _, row := range rows {
			number := !strings.Contains(row.Account, "-")
			got := len(row.Problems) == 1 && errors.Is(row.Problems[0], read.ErrAccountNumber) && row.Problems[0].Column == read.ColAccount
			if got != number || len(row.Warnings) > 0 {
				t.Errorf("line %d account %q: problems %v warnings %v, want a rejection %v", row.Line, row.Account, row.Problems, row.Warnings, number)
			}
			if got {
				rejected++
			}
		}
		if rejected < 40 {
			t.Errorf("%d rows rejected: the file has 44 number cells", rejected)
		}
	})
	t.Run("accounts imported as numbers are flagged with --numeric-accounts", func(t *testing.T) {
		rows := readAllRows(t, "../../testdata/libreoffice/accounts-as-numbers.xlsx", read.Options{NumericAccounts: true})
		if len(rows) != 50 {
			t.Fatalf("%d rows, want 50", len(rows))
		}
		flagged := 0
		for _, row := range rows {
			// Calc keeps "2199-3518-190937" as text; plain digits become numbers.
			number := !strings.Contains(row.Account, "-")
			if got := slices.Contains(row.Warnings, read.WarnAccountNumber); got != number {
				t.Errorf("line %d account %q: flagged %v, want %v", row.Line, row.Account, got, number)
			}
			if number {
				flagged++
			}
		}
		if flagged < 40 {
			t.Errorf("%d rows flagged: the file has 44 number cells", flagged)
		}
		if rows[0].Account != "181590832" {
			t.Errorf("first account %q: the leading zeros are gone in the file; we read what is there", rows[0].Account)
		}
	})
	t.Run("accounts stored as text keep their zeros and raise nothing", func(t *testing.T) {
		rows := readAllRows(t, "../../testdata/libreoffice/accounts-as-text.xlsx", read.Options{})
		if len(rows) != 50 || rows[0].Account != "000181590832" {
			t.Fatalf("%d rows, first account %q", len(rows), rows[0].Account)
		}
		for _, row := range rows {
			if len(row.Warnings) > 0 || len(row.Problems) > 0 {
				t.Errorf("line %d: %v %v", row.Line, row.Warnings, row.Problems)
			}
		}
	})
}
