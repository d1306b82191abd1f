package read

import (
	"bytes"
	"fmt"
	"io"

	"github.com/gocarina/gocsv"
	"github.com/xuri/excelize/v2"
)

// templateRecord is one input row as gocsv sees it; its tags are Columns, in order (a test
// checks that they stay so).
type templateRecord struct {
	Ref         string `csv:"external_invoice_ref"`
	Recipient   string `csv:"recipient_reference"`
	Bank        string `csv:"bank"`
	ServiceID   string `csv:"payout_service_id"`
	Account     string `csv:"third_party_account_no"`
	Amount      string `csv:"amount"`
	Description string `csv:"payment_description"`
}

// WriteTemplate writes an empty input file with the expected header. In the XLSX template the
// account and reference columns are formatted as text, so a typed account keeps its leading
// zeros, and the amount column as a two-decimal number.
func WriteTemplate(w io.Writer, xlsx bool) error {
	if !xlsx {
		// gocsv writes the header from the struct tags even for no rows.
		if err := gocsv.Marshal(&[]templateRecord{}, w); err != nil {
			return fmt.Errorf("write template: %w", err)
		}
		return nil
	}
	f := excelize.NewFile()
	defer f.Close()
	if err := writeXLSXSheet(f, nil); err != nil {
		return fmt.Errorf("write template: %w", err)
	}
	if _, err := f.WriteTo(w); err != nil {
		return fmt.Errorf("write template: %w", err)
	}
	return nil
}

// writeXLSXSheet fills Sheet1 with the header, text formats, and rows (each in Columns order;
// amounts as numbers). Tests use it to make the XLSX sample.
func writeXLSXSheet(f *excelize.File, rows [][]any) error {
	const sheet = "Sheet1"
	text, err := f.NewStyle(&excelize.Style{NumFmt: 49})
	if err != nil {
		return err
	}
	money, err := f.NewStyle(&excelize.Style{NumFmt: 4})
	if err != nil {
		return err
	}
	bold, err := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}})
	if err != nil {
		return err
	}
	for i, col := range Columns {
		name, _ := excelize.ColumnNumberToName(i + 1)
		style := text
		width := 24.0
		if col == ColAmount {
			style, width = money, 14
		}
		if err := f.SetColStyle(sheet, name, style); err != nil {
			return err
		}
		if err := f.SetColWidth(sheet, name, name, width); err != nil {
			return err
		}
	}
	header := make([]any, len(Columns))
	for i, c := range Columns {
		header[i] = c
	}
	if err := f.SetSheetRow(sheet, "A1", &header); err != nil {
		return err
	}
	if err := f.SetRowStyle(sheet, 1, 1, bold); err != nil {
		return err
	}
	for i, r := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+2)
		if err := f.SetSheetRow(sheet, cell, &r); err != nil {
			return err
		}
	}
	return nil
}

// TemplateWithRows is the XLSX template with rows filled in (each in Columns order). The tests
// make the XLSX sample with it.
func TemplateWithRows(rows [][]any) ([]byte, error) {
	f := excelize.NewFile()
	defer f.Close()
	if err := writeXLSXSheet(f, rows); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
