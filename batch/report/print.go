package report

import (
	"strings"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"
)

// paperA4 is the OOXML paper size code of A4, the paper of Malaysian offices.
const paperA4 = 9

// printSetup says how a sheet prints: with its header row on every page (headerRow), on one page
// (onePage), and its first columns only (columns; 0 for all of them).
type printSetup struct {
	headerRow bool
	onePage   bool
	columns   int
}

// setUpPrinting makes a sheet print as an auditor expects: A4 landscape, one page wide (as
// many pages down as the rows need), narrow margins, the sheet name and page numbers in the
// footer. The tables' widths (printWidthChars) keep the text of a page one wide at 8 pt or more.
// It must come before the sheet's stream writer is made: the sheet properties that switch
// fitting on are written first.
func setUpPrinting(f *excelize.File, sheet string, how printSetup) error {
	fit := true
	if err := f.SetSheetProps(sheet, &excelize.SheetPropsOptions{FitToPage: &fit}); err != nil {
		return err
	}
	size, orientation, wide, tall := paperA4, "landscape", 1, 0
	if how.onePage {
		tall = 1
	}
	if err := f.SetPageLayout(sheet, &excelize.PageLayoutOptions{Size: &size, Orientation: &orientation,
		FitToWidth: &wide, FitToHeight: &tall}); err != nil {
		return err
	}
	side, edge, band := 0.4, 0.6, 0.3 // inches
	if err := f.SetPageMargins(sheet, &excelize.PageLayoutMarginsOptions{Left: &side, Right: &side, Top: &edge,
		Bottom: &edge, Header: &band, Footer: &band}); err != nil {
		return err
	}
	if err := f.SetHeaderFooter(sheet, &excelize.HeaderFooterOptions{OddFooter: "&L&F — &A&RPage &P of &N"}); err != nil {
		return err
	}
	quoted := "'" + strings.ReplaceAll(sheet, "'", "''") + "'"
	if how.columns > 0 {
		last, err := excelize.ColumnNumberToName(how.columns)
		if err != nil {
			return err
		}
		if err := f.SetDefinedName(&excelize.DefinedName{Name: "_xlnm.Print_Area", Scope: sheet,
			RefersTo: quoted + "!$A:$" + last}); err != nil {
			return err
		}
	}
	if !how.headerRow {
		return nil
	}
	return f.SetDefinedName(&excelize.DefinedName{Name: "_xlnm.Print_Titles", Scope: sheet,
		RefersTo: quoted + "!$1:$1"})
}

// lineHeight is the height in points of a line of the workbook's default font (Calibri 11).
const lineHeight = 15.0

// maxRowHeight is the highest row a spreadsheet allows, in points.
const maxRowHeight = 409.0

// wrappedHeight is the height in points a row needs for its free text to wrap within columns of
// widths (in characters), or 0 when one line holds it: the row then keeps the default height.
// The height is written into the file because a spreadsheet does not always size a streamed
// row itself (LibreOffice prints it one line high, the wrapped lines over the next rows). A
// column's width counts digits and words wrap short of the edge: a line is taken to hold 0.9 of
// the width in characters.
func wrappedHeight(cells []cell, widths []float64) float64 {
	lines := 1
	for j, c := range cells {
		if c.kind != kindText && c.kind != kindCode || j >= len(widths) || c.s == "" {
			continue
		}
		lines = max(lines, wrappedLines(c.s, max(int(widths[j]*0.9), 1)))
	}
	if lines == 1 {
		return 0
	}
	return min(lineHeight*float64(lines), maxRowHeight)
}

// wrappedLines is how many lines s takes wrapped at word boundaries within perLine characters, a
// word longer than a line broken where the line ends, as a spreadsheet wraps a cell.
func wrappedLines(s string, perLine int) int {
	lines, used := 1, 0
	for i, paragraph := range strings.Split(s, "\n") {
		if i > 0 {
			lines++
		}
		used = 0
		for _, word := range strings.Fields(paragraph) {
			n := utf8.RuneCountInString(word)
			switch {
			case used == 0:
			case used+1+n <= perLine:
				used++
			default:
				lines++
				used = 0
			}
			for n > perLine {
				lines++
				n -= perLine
			}
			used += n
		}
	}
	return lines
}

// headingHeight is the height in points the header row needs for headings that wrap within
// their columns, or 0 when each fits on one line.
func headingHeight(titles []string, widths []float64) float64 {
	cells := make([]cell, len(titles))
	for i, t := range titles {
		cells[i] = cell{s: t, kind: kindText}
	}
	return wrappedHeight(cells, widths)
}
