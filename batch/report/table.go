package report

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/shopspring/decimal"
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

func text(s string) cell            { return cell{Neutralize(s), kindText} }
func code(s string) cell            { return cell{Neutralize(s), kindCode} }
func integer(n int) cell            { return cell{strconv.Itoa(n), kindInt} }
func amount(d decimal.Decimal) cell { return cell{amountString(d), kindAmount} }

// table is a report's header and its columns' widths in the XLSX.
type table struct {
	header []string
	widths []float64
}

func runTable() table {
	return table{
		header: RunHeader,
		widths: []float64{6, 20, 30, 17, 36, 22, 12, 11, 20, 18, 48},
	}
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
