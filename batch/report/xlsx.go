package report

import (
	"strconv"
	"unicode/utf16"

	"github.com/shopspring/decimal"
	"github.com/xuri/excelize/v2"

	"github.com/payout/payout/batch/words"
)

// Sheet names of the XLSX reports. "Rows" comes first: a reader that takes the first sheet gets
// the table.
const (
	SheetRows    = "Rows"
	SheetSummary = "Summary"
)

// styles are the cell styles of a report workbook. Every cell is aligned to the top: a row whose
// free text wraps over several lines reads from its first line across.
type styles struct{ header, text, amount, wrap, top int }

func newStyles(f *excelize.File) (styles, error) {
	var s styles
	var err error
	top := &excelize.Alignment{Vertical: "top"}
	wrapTop := &excelize.Alignment{Vertical: "top", WrapText: true}
	if s.header, err = f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}, Alignment: wrapTop}); err != nil {
		return s, err
	}
	// "@": stays text when edited. A long reference wraps rather than running under the next
	// column on paper.
	if s.text, err = f.NewStyle(&excelize.Style{NumFmt: 49, Alignment: wrapTop}); err != nil {
		return s, err
	}
	// Free text (names, bank names, messages) wraps within its column, so that a long message
	// neither hides behind the next cell nor widens the printed page.
	if s.wrap, err = f.NewStyle(&excelize.Style{Alignment: wrapTop}); err != nil {
		return s, err
	}
	if s.top, err = f.NewStyle(&excelize.Style{Alignment: top}); err != nil {
		return s, err
	}
	// "#,##0.00", indented from the right edge so that an amount never touches the text of the
	// column to its right.
	s.amount, err = f.NewStyle(&excelize.Style{NumFmt: 4, Alignment: &excelize.Alignment{Vertical: "top", Horizontal: "right", Indent: 1}})
	return s, err
}

// sheetRowsMax is the most data rows one sheet holds: Excel's 1,048,576 rows less the header. A
// longer table goes on over further sheets, "Rows 2", "Rows 3" and so on, each with the header.
// Tests lower it.
var sheetRowsMax = excelize.TotalRows - 1

// rowsSheetName is the name of the n-th sheet (from 1) of a table's rows.
func rowsSheetName(n int) string {
	if n == 1 {
		return SheetRows
	}
	return SheetRows + " " + strconv.Itoa(n)
}

// streamCells converts a row's cells for the stream writer into values, reused.
func streamCells(values []any, cells []cell, st styles) []any {
	values = values[:0]
	for _, c := range cells {
		values = append(values, streamCell(c, st))
	}
	return values
}

// streamCell converts a cell for the stream writer. The stream writer takes numbers only as Go
// numbers, so an amount goes through float64 here and nowhere else: it is written only when
// strconv's shortest form of that float is the decimal's own value (any amount under 15
// significant digits), so the file holds the exact decimal text. An amount that would not
// survive, or that has more than two decimals (a rejected row), is written as text.
func streamCell(c cell, st styles) any {
	switch c.kind {
	case kindInt:
		if n, err := strconv.ParseInt(c.s, 10, 64); err == nil {
			return excelize.Cell{StyleID: st.top, Value: n}
		}
		return nil
	case kindAmount:
		if c.s == "" {
			return nil
		}
		if d, err := decimal.NewFromString(c.s); err == nil && d.Exponent() >= -2 {
			f, _ := d.Float64()
			if back, err := decimal.NewFromString(strconv.FormatFloat(f, 'f', -1, 64)); err == nil && back.Equal(d) {
				return excelize.Cell{StyleID: st.amount, Value: f}
			}
		}
		return excelize.Cell{StyleID: st.text, Value: capCell(words.Neutralize(c.s))}
	case kindCode:
		return excelize.Cell{StyleID: st.text, Value: capCell(c.s)}
	default:
		if c.s == "" {
			return nil
		}
		return excelize.Cell{StyleID: st.wrap, Value: capCell(c.s)}
	}
}

// cellCutMark ends a text cut to Excel's limit of 32,767 characters (UTF-16 units) a cell, which
// excelize would otherwise cut without a word.
const cellCutMark = " [… cut at Excel's 32,767-character cell limit; the CSV report has the whole text]"

// capCell returns s, or s cut to fit one XLSX cell with cellCutMark at its end.
func capCell(s string) string {
	if len(s) <= excelize.TotalCellChars || utf16Len(s) <= excelize.TotalCellChars {
		return s // UTF-8 never has fewer bytes than UTF-16 units
	}
	room := excelize.TotalCellChars - utf16Len(cellCutMark)
	used := 0
	for i, r := range s {
		n := utf16.RuneLen(r)
		if n < 0 {
			n = 1 // invalid UTF-8 is written as U+FFFD
		}
		if used+n > room {
			return s[:i] + cellCutMark
		}
		used += n
	}
	return s
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if k := utf16.RuneLen(r); k > 0 {
			n += k
		} else {
			n++
		}
	}
	return n
}

// summaryWidths are the Summary sheet's column widths: labels, values (and the totals' counts),
// the totals' amounts. A value wraps within its column; a line on its own spans all of them.
var summaryWidths = []float64{34, 46, 18, 10}

// writeSummarySheet writes label/value pairs. The sheet is small, so it uses the ordinary API,
// whose SetCellDefault writes a number from its exact decimal text.
func writeSummarySheet(f *excelize.File, st styles, rows [][]cell) error {
	if _, err := f.NewSheet(SheetSummary); err != nil {
		return err
	}
	if err := setUpPrinting(f, SheetSummary, printSetup{onePage: true}); err != nil {
		return err
	}
	for i, w := range summaryWidths {
		col, err := excelize.ColumnNumberToName(i + 1)
		if err != nil {
			return err
		}
		if err := f.SetColWidth(SheetSummary, col, col, w); err != nil {
			return err
		}
	}
	var spanned float64
	for _, w := range summaryWidths {
		spanned += w
	}
	for i, row := range rows {
		for j, c := range row {
			ref, err := excelize.CoordinatesToCellName(j+1, i+1)
			if err != nil {
				return err
			}
			if err := setSummaryCell(f, ref, c, st, j == 0 && len(row) > 1); err != nil {
				return err
			}
		}
		height := wrappedHeight(row, summaryWidths)
		if len(row) == 1 && row[0].kind == kindText {
			// A sentence on a line of its own (why a run stopped, what the sheet lists) reads
			// across the sheet, not down its first column.
			first, _ := excelize.CoordinatesToCellName(1, i+1)
			last, _ := excelize.CoordinatesToCellName(len(summaryWidths), i+1)
			if err := f.MergeCell(SheetSummary, first, last); err != nil {
				return err
			}
			if err := f.SetCellStyle(SheetSummary, first, last, st.wrap); err != nil {
				return err
			}
			height = wrappedHeight(row, []float64{spanned})
		}
		if height > 0 {
			if err := f.SetRowHeight(SheetSummary, i+1, height); err != nil {
				return err
			}
		}
	}
	return nil
}

func setSummaryCell(f *excelize.File, ref string, c cell, st styles, label bool) error {
	var err error
	switch c.kind {
	case kindInt:
		err = f.SetCellDefault(SheetSummary, ref, c.s)
	case kindAmount:
		if err = f.SetCellDefault(SheetSummary, ref, c.s); err == nil {
			err = f.SetCellStyle(SheetSummary, ref, ref, st.amount)
		}
	default:
		style := st.wrap
		if c.kind == kindCode {
			style = st.text
		}
		if err = f.SetCellStr(SheetSummary, ref, capCell(c.s)); err == nil {
			err = f.SetCellStyle(SheetSummary, ref, ref, style)
		}
	}
	if err == nil && label {
		err = f.SetCellStyle(SheetSummary, ref, ref, st.header)
	}
	return err
}
