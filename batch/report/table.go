package report

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch/words"
)

// cellKind says how a cell is written to the XLSX (the CSV writes every cell as its text).
type cellKind int

const (
	kindText   cellKind = iota // free text, neutralised
	kindCode                   // an identifier (reference, account number): neutralised, text-formatted, leading zeros kept
	kindInt                    // a count or line number
	kindAmount                 // a decimal amount, numeric with two decimals
)

type cell struct {
	s    string
	kind cellKind
}

func text(s string) cell            { return cell{words.Neutralize(s), kindText} }
func code(s string) cell            { return cell{words.Neutralize(s), kindCode} }
func integer(n int) cell            { return cell{strconv.Itoa(n), kindInt} }
func amount(d decimal.Decimal) cell { return cell{amountString(d), kindAmount} }

// table is a report's CSV header and its XLSX sheet of rows, which people print: the sheet's
// columns, in the order they appear there, and how many of them, from the first, print.
type table struct {
	header  []string
	sheet   []column
	printed int // 0: every column
}

// column is a column of a report's XLSX sheet: its heading, its width in characters, and the
// index, in the CSV's order, of the cell it shows.
type column struct {
	title string
	width float64
	from  int
}

// printWidthChars bounds the widths of a sheet's printed columns, added up. A spreadsheet
// measures a width in digits of the font it draws with, and LibreOffice draws Calibri, where it
// lacks it, with DejaVu Sans, about a third wider: at this width a page one wide of A4 landscape
// still prints at 8.3 pt or more with either (Calibri 11: about 10 pt). Free text wraps within its
// column, so narrow columns cost pages, never width.
const printWidthChars = 140

// The run's sheet prints what a person checks on paper; the provider's id and the service's own
// status word (the State says what it means) follow on screen, beyond the printed columns.
func runTable() table {
	return table{header: RunHeader, printed: 9, sheet: []column{
		{"Line", 6, 0}, {"Reference", 18, 1}, {"Recipient", 18, 2}, {"Bank", 17, 4}, {"Account", 17, 5},
		{"Amount (MYR)", 13, 6}, {"State", 11, 7}, {"Invoice no.", 19, 8}, {"Message", 21, 10},
		{"Provider", 9, 3}, {"Status", 10, 9},
	}}
}

// titles are the table's sheet headings, in the sheet's order.
func (t table) titles() []string {
	titles := make([]string, len(t.sheet))
	for i, c := range t.sheet {
		titles[i] = c.title
	}
	return titles
}

// widths are the table's sheet column widths, in the sheet's order.
func (t table) widths() []float64 {
	widths := make([]float64, len(t.sheet))
	for i, c := range t.sheet {
		widths[i] = c.width
	}
	return widths
}

// sheetCells puts cells, in the CSV's order, into the sheet's order, in buf reused.
func (t table) sheetCells(cells, buf []cell) []cell {
	buf = buf[:0]
	for _, c := range t.sheet {
		buf = append(buf, cells[c.from])
	}
	return buf
}

// runCells is a run's report row as cells, in RunHeader's order, in buf reused.
func runCells(r Row, buf []cell) []cell {
	provider := cell{kind: kindInt}
	if r.ProviderID != 0 {
		provider.s = strconv.FormatInt(r.ProviderID, 10)
	}
	amt := cell{kind: kindAmount}
	if s, numeric := rowAmount(r); numeric {
		amt.s = s
	} else {
		amt = text(s)
	}
	return append(buf[:0], integer(r.Line), code(r.Ref), text(r.Recipient), provider, text(r.Bank),
		code(r.Account), amt, text(r.State), code(r.InvoiceNo), text(r.TransactionStatus), text(r.Message))
}

// writeCSVFrom writes the table's header, then every row rows emits.
func (t table) writeCSVFrom(w io.Writer, rows func(emit func([]cell) error) error) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.header); err != nil {
		return err
	}
	rec := make([]string, len(t.header))
	err := rows(func(cells []cell) error {
		for j, c := range cells {
			rec[j] = c.s
		}
		return cw.Write(rec[:len(cells)])
	})
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}
