package retry

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/xuri/excelize/v2"

	"github.com/payout/payout/batch/atomicfile"
	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/words"
)

// retryFileMode keeps a retry file, which carries account numbers, to its owner.
const retryFileMode = 0o600

// retryTable is a retry file's cells: the header, then a record per row.
type retryTable struct {
	header  []string
	records [][]string
}

// retryTableOf lays rows out in the input's columns (the template's when the run recorded none),
// with Column last, or where the input already had it (a retry file's own retry file). A
// column the ledger does not keep (a note of the user's) is left empty.
func retryTableOf(columns []string, rows []retryRow) retryTable {
	if len(columns) == 0 {
		columns = read.Columns
	}
	header := append([]string(nil), columns...)
	whyAt := -1
	known := make([]string, len(header))
	for i, name := range header {
		if read.IsColumn(name, Column) && whyAt < 0 {
			whyAt = i
			continue
		}
		for _, col := range read.Columns {
			if read.IsColumn(name, col) {
				known[i] = col
			}
		}
	}
	if whyAt < 0 {
		whyAt = len(header)
		header = append(header, Column)
		known = append(known, "")
	}
	t := retryTable{header: header, records: make([][]string, 0, len(rows))}
	for _, row := range rows {
		rec := make([]string, len(header))
		for i, col := range known {
			if col != "" {
				rec[i] = row.values[col]
			}
		}
		rec[whyAt] = row.why
		if row.rejected && row.values[read.ColServiceID] == "" && slices.Contains(known, read.ColServiceID) {
			rec[whyAt] += " (its " + read.ColServiceID + " as read is not kept: enter it again)"
		}
		t.records = append(t.records, rec)
	}
	return t
}

// writeRetryCSV writes t as a CSV the reader takes back as input. Text that a spreadsheet would
// take for a formula gets the result CSV's guard (words.Neutralize), so that opening the file
// in a spreadsheet and saving it keeps the text; the reader takes the guard off again
// (words.Unneutralize), so the value paid is the value recorded.
func writeRetryCSV(dir, path string, t retryTable) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("create report dir: %w", err)
	}
	err := atomicfile.Write(path, retryFileMode, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.UseCRLF = true
		if err := cw.Write(t.header); err != nil {
			return err
		}
		guarded := make([]string, len(t.header))
		for _, rec := range t.records {
			for i, v := range rec {
				guarded[i] = words.Neutralize(v)
			}
			if err := cw.Write(guarded); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	})
	if err != nil {
		return fmt.Errorf("write retry file: %w", err)
	}
	return nil
}

// writeRetryXLSX writes t as a workbook of one sheet whose every cell is text, formatted as text:
// an account number keeps its leading zeros when edited, and no value runs as a formula.
func writeRetryXLSX(path string, t retryTable) error {
	err := atomicfile.Write(path, retryFileMode, func(w io.Writer) error {
		f := excelize.NewFile()
		defer f.Close()
		style, err := f.NewStyle(&excelize.Style{NumFmt: 49})
		if err != nil {
			return err
		}
		sw, err := f.NewStreamWriter("Sheet1")
		if err != nil {
			return err
		}
		for i, rec := range append([][]string{t.header}, t.records...) {
			cells := make([]any, len(rec))
			for j, v := range rec {
				cells[j] = excelize.Cell{StyleID: style, Value: v}
			}
			cell, err := excelize.CoordinatesToCellName(1, i+1)
			if err != nil {
				return err
			}
			if err := sw.SetRow(cell, cells); err != nil {
				return err
			}
		}
		if err := sw.Flush(); err != nil {
			return err
		}
		return f.Write(w)
	})
	if err != nil {
		return fmt.Errorf("write retry file: %w", err)
	}
	return nil
}
