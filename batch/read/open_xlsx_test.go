package read_test

import (
	"reflect"
	"testing"

	"github.com/payout/payout/batch/read"
	"github.com/xuri/excelize/v2"
)

// A workbook read twice, as a run's survey and its recording pass read it, gives the same rows
// both times, with what the reader found wrong with them: a formula's stale cached value, a
// hidden row, an account stored as a number, a date in the amount column, a value beyond the
// header.
func TestXLSXReadInTwoPassesGivesIdenticalRows(t *testing.T) {
	t.Parallel()
	path := buildXLSX(t, func(f *excelize.File) {
		setRows(t, f, "Sheet1", [][]any{inputXLSXHeader,
			{"P-1", "Tan Wei Ming", "Maybank", "0123456789", 10.5, "Gaji"},
			{"P-2", "Lim Mei Ling", "Maybank", "0123456789", nil, "Gaji", nil, 250},
			{"P-3", "Ng Siew Ling", "CIMB Bank Berhad", 123456789, 30, nil},
			{},
			{"P-5", "Goh Boon Huat", "Maybank", "0123456789", 45000, nil, "extra"},
			{"P-6", "Siti Aminah", "RHB Bank", "0123456789", 60, nil},
		})
		if err := f.SetCellFormula("Sheet1", "E3", "H3*2"); err != nil {
			t.Fatal(err)
		}
		date, err := f.NewStyle(&excelize.Style{NumFmt: 14})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.SetCellStyle("Sheet1", "E6", "E6", date); err != nil {
			t.Fatal(err)
		}
		if err := f.SetRowVisible("Sheet1", 7, false); err != nil {
			t.Fatal(err)
		}
	}, func(part string, xml []byte) []byte {
		if part != "xl/worksheets/sheet1.xml" {
			return xml
		}
		return cacheFormula(t, xml, "E3", "", "400") // stale: H3*2 is 500 now
	})
	first := readAllRows(t, path, read.Options{})
	second := readAllRows(t, path, read.Options{})
	problems := 0
	for _, r := range first {
		problems += len(r.Problems)
	}
	if len(first) != 5 || problems < 5 {
		t.Fatalf("first pass: %d rows with %d problems, want 5 rows and the five problems the workbook has: %+v", len(first), problems, first)
	}
	if !reflect.DeepEqual(first, second) {
		t.Errorf("the second pass read\n%+v\nthe first\n%+v", second, first)
	}
}
