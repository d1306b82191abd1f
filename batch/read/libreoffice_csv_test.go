package read_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/payout/payout/batch/read"
)

// CSV written by LibreOffice Calc 7.4 ("Text - txt - csv (StarCalc)", UTF-8).
func TestLibreOfficeCSV(t *testing.T) {
	t.Parallel()
	t.Run("quoted commas, quotes and a line break", func(t *testing.T) {
		got := checkFile(t, "calc-export.csv", read.Options{})
		if len(got) != 3 {
			t.Fatalf("%d rows, want 3", len(got))
		}
		wantPaid(t, got, 2, "030824628194", "1250")
		if p := got[2].payment; p.Recipient != "Tan, Wei Ming" || p.Description != "Gaji, November" {
			t.Errorf("line 2: %+v", p)
		}
		// The record starting on line 3 holds a line break: it is rejected there, and the next
		// record is line 5, as an editor shows it.
		wantRejected(t, got, 3, read.ColDescription, read.ErrDescription)
		if errs := got[3].errs; len(errs) != 1 || !strings.Contains(errs[0].Error(), "it holds a line break: keep the text on one line") {
			t.Errorf("line 3: %v, want the line break named", errs)
		}
		wantPaid(t, got, 5, "21993518190937", "0.1")
	})
	t.Run("a note to the right of the table", func(t *testing.T) {
		got := checkFile(t, "note-beyond-header.csv", read.Options{})
		if len(got) != 3 {
			t.Fatalf("%d rows, want 3", len(got))
		}
		wantPaid(t, got, 2, "030824628194", "1250")
		wantRejected(t, got, 3, read.WholeRow, read.ErrFieldCount)
		wantPaid(t, got, 4, "21993518190937", "0.1")
	})
	t.Run("semicolons refuse the file", func(t *testing.T) {
		rd, err := read.OpenFile("../../testdata/libreoffice/calc-export-semicolon.csv", read.Options{})
		if err == nil {
			_, err = rd.Next()
			rd.Close()
		}
		if !errors.Is(err, read.ErrHeaderMissing) || !strings.Contains(err.Error(), "separated by semicolons") {
			t.Fatalf("err %v, want the header refused for its semicolons", err)
		}
	})
}
