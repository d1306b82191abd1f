package report

import (
	"github.com/xuri/excelize/v2"
)

// paperA4 is the OOXML paper size code of A4, the paper of Malaysian offices.
const paperA4 = 9

// setUpPrinting makes a sheet print as an auditor expects: A4 landscape, one page wide (as
// many pages down as the rows need), narrow margins, the sheet name and page numbers in the
// footer. A Rows sheet repeats its header row on every page (headerRow); the Summary sheet
// (onePage) fits on one page. It must come before the sheet's stream writer is made: the sheet
// properties that switch fitting on are written first.
func setUpPrinting(f *excelize.File, sheet string, headerRow, onePage bool) error {
	fit := true
	if err := f.SetSheetProps(sheet, &excelize.SheetPropsOptions{FitToPage: &fit}); err != nil {
		return err
	}
	size, orientation, wide, tall := paperA4, "landscape", 1, 0
	if onePage {
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
	if !headerRow {
		return nil
	}
	return f.SetDefinedName(&excelize.DefinedName{Name: "_xlnm.Print_Titles", Scope: sheet,
		RefersTo: "'" + sheet + "'!$1:$1"})
}
