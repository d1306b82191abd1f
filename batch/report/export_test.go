package report

// SetSheetRowsMax lowers the rows a sheet holds, so that a test spreads a small table over
// several sheets; the returned func puts it back.
func SetSheetRowsMax(n int) (restore func()) {
	old := sheetRowsMax
	sheetRowsMax = n
	return func() { sheetRowsMax = old }
}
