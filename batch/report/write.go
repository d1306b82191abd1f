package report

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/shopspring/decimal"
	"github.com/xuri/excelize/v2"
)

// ErrBadName is returned when a run or reconciliation id, or an input name, cannot be part of a
// file name.
var ErrBadName = errors.New("report: name not usable in a file name")

const (
	dirMode  = 0o750
	fileMode = 0o640 // reports carry account numbers: not world-readable
)

// RunHeader is the header of a run's result CSV and of the XLSX sheet "Rows".
var RunHeader = []string{"line", "external_invoice_ref", "recipient_reference", "payout_service_id", "bank",
	"third_party_account_no", "amount", "state", "payout_invoice_no", "transaction_status", "message"}

// WriteRun writes a run's three reports into dir (created 0750 if missing):
// `<input base name>.<run id>.result.csv`, `.result.xlsx` and `.report.html`, where the base name
// is inputName without its directory and extension; a report written again from the ledger
// (Summary.Regenerated set) has `.regenerated-<UTC time>` after the run id. Each file is written to a temporary file and
// renamed, so a reader never sees half a report. The summary's totals are recomputed from rows
// (Summarize), so the reports tie out whatever the caller passed.
func WriteRun(dir, inputName string, s Summary, rows []Row) (Paths, error) {
	base := strings.TrimSuffix(filepath.Base(inputName), filepath.Ext(inputName))
	if base == "" || base == "." || base == string(filepath.Separator) {
		base = "payout"
	}
	if err := checkName(s.RunID); err != nil {
		return Paths{}, err
	}
	s = Summarize(s, rows)
	stem := filepath.Join(dir, base+"."+s.RunID)
	if !s.Regenerated.IsZero() {
		// Never over the run's own reports: they are the record of what the run saw.
		stem += ".regenerated-" + s.Regenerated.UTC().Format("20060102T150405Z")
	}
	p := Paths{CSV: stem + ".result.csv", XLSX: stem + ".result.xlsx", HTML: stem + ".report.html"}
	t := runTable(rows)
	return p, writeAll(dir, p, t, runSummaryCells(s), func(w io.Writer) error { return renderRun(w, s, rows) })
}

func checkName(id string) error {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, `/\`+"\x00") {
		return fmt.Errorf("%w: %q", ErrBadName, id)
	}
	return nil
}

func writeAll(dir string, p Paths, t table, summary [][]cell, html func(io.Writer) error) error {
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return fmt.Errorf("create report dir: %w", err)
	}
	// The three files are independent, and each ends with its own fsync: written side by side they
	// cost about the slowest one (the XLSX's compression), which is time at the end of every run.
	writers := []struct {
		kind, path string
		write      func(io.Writer) error
	}{
		{"csv", p.CSV, t.writeCSV},
		{"xlsx", p.XLSX, func(w io.Writer) error { return writeXLSX(w, t, summary) }},
		{"html", p.HTML, html},
	}
	errs := make([]error, len(writers))
	var wg sync.WaitGroup
	for i, wr := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := atomicWrite(wr.path, wr.write); err != nil {
				errs[i] = fmt.Errorf("write %s report: %w", wr.kind, err)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return syncDir(dir)
}

// atomicWrite writes path through a temporary file in the same directory, synced before the
// rename, so that a crash leaves either the old file or the new one.
func atomicWrite(path string, write func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 64<<10)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Chmod(fileMode); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync report dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync report dir: %w", err)
	}
	return nil
}

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

// table is a header and a way to produce row i, so that large reports are streamed, not copied.
type table struct {
	header []string
	widths []float64
	n      int
	row    func(i int, buf []cell) []cell
}

func runTable(rows []Row) table {
	return table{
		header: RunHeader,
		widths: []float64{7, 22, 28, 10, 24, 20, 14, 12, 20, 12, 50},
		n:      len(rows),
		row: func(i int, buf []cell) []cell {
			r := rows[i]
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
		},
	}
}

func (t table) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.header); err != nil {
		return err
	}
	var buf []cell
	rec := make([]string, len(t.header))
	for i := range t.n {
		buf = t.row(i, buf)
		for j, c := range buf {
			rec[j] = c.s
		}
		if err := cw.Write(rec[:len(buf)]); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Sheet names of the XLSX reports. "Rows" comes first: a reader that takes the first sheet gets
// the table.
const (
	SheetRows    = "Rows"
	SheetSummary = "Summary"
)

type styles struct{ header, text, amount int }

func newStyles(f *excelize.File) (styles, error) {
	var s styles
	var err error
	if s.header, err = f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}}); err != nil {
		return s, err
	}
	if s.text, err = f.NewStyle(&excelize.Style{NumFmt: 49}); err != nil { // "@": stays text when edited
		return s, err
	}
	s.amount, err = f.NewStyle(&excelize.Style{NumFmt: 4}) // "#,##0.00"
	return s, err
}

// fastZip compresses the workbook with flate.BestSpeed: a report is written at the end of every
// run, and the default level spends about twice the CPU for a slightly smaller file. Like
// archive/zip's own compressor, it reuses flate writers (each holds about a megabyte).
func fastZip(w io.Writer) *zip.Writer {
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		fw, err := fastFlater(out)
		if err != nil {
			return nil, err
		}
		return &pooledFlater{fw: fw}, nil
	})
	return zw
}

var fastFlaters sync.Pool

// fastFlater is a BestSpeed flate writer onto out, from the pool; put it back when done.
func fastFlater(out io.Writer) (*flate.Writer, error) {
	if fw, ok := fastFlaters.Get().(*flate.Writer); ok {
		fw.Reset(out)
		return fw, nil
	}
	return flate.NewWriter(out, flate.BestSpeed)
}

type pooledFlater struct{ fw *flate.Writer }

func (p *pooledFlater) Write(b []byte) (int, error) {
	if p.fw == nil {
		return 0, errors.New("report: write to a closed compressor")
	}
	return p.fw.Write(b)
}

func (p *pooledFlater) Close() error {
	if p.fw == nil {
		return nil
	}
	err := p.fw.Close()
	fastFlaters.Put(p.fw)
	p.fw = nil
	return err
}

func writeXLSX(w io.Writer, t table, summary [][]cell) error {
	return writeXLSXRows(w, t, summary, true)
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

// writeXLSXRows writes the workbook. With spliceRows, the data rows are written by sheetRowsXML
// when it can, and put into the Rows sheet at zip time; otherwise, or when it cannot, they go
// through excelize's StreamWriter. The two files are the same, byte for byte.
func writeXLSXRows(w io.Writer, t table, summary [][]cell, spliceRows bool) error {
	f := excelize.NewFile()
	defer f.Close()
	if err := f.SetSheetName("Sheet1", SheetRows); err != nil {
		return err
	}
	st, err := newStyles(f)
	if err != nil {
		return err
	}
	var rows [2][]byte
	spliceRows = spliceRows && t.n <= sheetRowsMax
	if spliceRows {
		rows, spliceRows = sheetRowsXML(t, st)
	}
	f.SetZipWriter(func(w io.Writer) excelize.ZipWriter {
		if spliceRows {
			return &splicingZip{Writer: fastZip(w), rows: rows}
		}
		return fastZip(w)
	})
	for sheet, from := 1, 0; sheet == 1 || from < t.n; sheet++ {
		to := min(from+sheetRowsMax, t.n)
		if err := writeRowsSheet(f, rowsSheetName(sheet), t, st, from, to, !spliceRows); err != nil {
			return err
		}
		from = to
	}
	if err := writeSummarySheet(f, st, summary); err != nil {
		return err
	}
	// The Rows sheet stays the active one: NewSheet does not change it, and SetActiveSheet would
	// parse the whole streamed sheet back.
	return f.Write(w)
}

// writeRowsSheet writes the header and, when withRows, the table's rows from (inclusive) to to
// (exclusive) into the sheet name, made if missing.
func writeRowsSheet(f *excelize.File, name string, t table, st styles, from, to int, withRows bool) error {
	if idx, err := f.GetSheetIndex(name); err != nil {
		return err
	} else if idx < 0 {
		if _, err := f.NewSheet(name); err != nil {
			return err
		}
	}
	sw, err := f.NewStreamWriter(name)
	if err != nil {
		return err
	}
	for i, width := range t.widths {
		if err := sw.SetColWidth(i+1, i+1, width); err != nil {
			return err
		}
	}
	if err := sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
		return err
	}
	values := make([]any, len(t.header))
	for j, h := range t.header {
		values[j] = excelize.Cell{StyleID: st.header, Value: h}
	}
	if err := sw.SetRow("A1", values); err != nil {
		return err
	}
	if withRows {
		if err := streamRows(sw, t, st, from, to); err != nil {
			return err
		}
	}
	return sw.Flush()
}

func streamRows(sw *excelize.StreamWriter, t table, st styles, from, to int) error {
	var buf []cell
	values := make([]any, 0, len(t.header))
	for i := from; i < to; i++ {
		buf = t.row(i, buf)
		values = streamCells(values, buf, st)
		ref, err := excelize.CoordinatesToCellName(1, i-from+2)
		if err != nil {
			return err
		}
		if err := sw.SetRow(ref, values); err != nil {
			return err
		}
	}
	return nil
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
			return n
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
		return excelize.Cell{StyleID: st.text, Value: capCell(Neutralize(c.s))}
	case kindCode:
		return excelize.Cell{StyleID: st.text, Value: capCell(c.s)}
	default:
		if c.s == "" {
			return nil
		}
		return capCell(c.s)
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

// writeSummarySheet writes label/value pairs. The sheet is small, so it uses the ordinary API,
// whose SetCellDefault writes a number from its exact decimal text.
func writeSummarySheet(f *excelize.File, st styles, rows [][]cell) error {
	if _, err := f.NewSheet(SheetSummary); err != nil {
		return err
	}
	if err := f.SetColWidth(SheetSummary, "A", "A", 28); err != nil {
		return err
	}
	if err := f.SetColWidth(SheetSummary, "B", "D", 22); err != nil {
		return err
	}
	for i, row := range rows {
		for j, c := range row {
			ref, err := excelize.CoordinatesToCellName(j+1, i+1)
			if err != nil {
				return err
			}
			if err := setSummaryCell(f, ref, c, st, j == 0); err != nil {
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
		if err = f.SetCellStr(SheetSummary, ref, capCell(c.s)); err == nil && c.kind == kindCode {
			err = f.SetCellStyle(SheetSummary, ref, ref, st.text)
		}
	}
	if err == nil && label {
		err = f.SetCellStyle(SheetSummary, ref, ref, st.header)
	}
	return err
}

const timeLayout = "2006-01-02T15:04:05Z07:00"

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(timeLayout)
}

func runSummaryCells(s Summary) [][]cell {
	var rows [][]cell
	for _, line := range []string{s.AbortedText(), s.NotSentText(), s.RegeneratedText()} {
		if line != "" {
			rows = append(rows, []cell{text(line)})
		}
	}
	if len(rows) > 0 {
		rows = append(rows, []cell{})
	}
	rows = append(rows, [][]cell{
		{text("Run"), code(s.RunID)},
		{text("Kind"), text(s.Kind)},
		{text("Dry run"), text(strconv.FormatBool(s.DryRun))},
		{text("File"), text(s.File)},
		{text("File SHA-256"), code(s.FileSHA256)},
		{text("Started"), text(formatTime(s.Started))},
		{text("Ended"), text(formatTime(s.Ended))},
		{text("Rows"), integer(s.Rows)},
		{text("Skipped (done in an earlier run)"), integer(s.Skipped)},
		{},
		{text("State"), text("Rows"), text("Amount (MYR)")},
	}...)
	for _, t := range s.ByState {
		rows = append(rows, []cell{text(t.State), integer(t.Count), amount(t.Amount)})
	}
	return append(rows, []cell{text("Total"), integer(s.Rows), amount(s.Total)})
}
