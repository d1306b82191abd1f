package report

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/xuri/excelize/v2"

	"github.com/payout/payout/batch/atomicfile"
	"github.com/payout/payout/batch/runid"
)

// XLSXListLimit is how many rows an XLSX report lists in full: the report of a longer file lists
// there only the rows that need attention (writing a million rows to a workbook takes far longer
// than checking or resuming them, and no one reads them there). The CSV always lists every row.
const XLSXListLimit = 10_000

// batchRows is how many rows travel together from the caller to the three writers.
const batchRows = 512

// WriteRunStream writes a run's three reports, as WriteRun does, from rows that each passes to
// add one at a time, in line order; the summary's counts and totals are computed from them. Only
// a bounded number of rows is held at any time: the CSV and the XLSX are written as rows arrive,
// and the HTML page keeps the rows it shows (see HTMLRowLimit). It returns the summary written.
func WriteRunStream(dir, inputName string, meta Summary, each func(add func(Row) error) error) (Paths, Summary, error) {
	p, err := runPaths(dir, inputName, meta)
	if err != nil {
		return Paths{}, meta, err
	}
	var summary Summary // set before the writers see the rows end, read by them after
	writers := []rowWriter[Row]{
		{"csv", p.CSV, writeCSVStream},
		{"xlsx", p.XLSX, func(w io.Writer, rows <-chan []Row) error {
			return writeRunXLSX(w, rows, meta.DryRun, func() Summary { return summary })
		}},
		{"html", p.HTML, func(w io.Writer, rows <-chan []Row) error {
			return writeRunHTML(w, rows, meta.DryRun, func() Summary { return summary })
		}},
	}
	var t tally
	// The three files are written side by side and each ends with its own fsync, but for a dry
	// run's: nothing depends on them, and a dry run is run again at no cost.
	err = streamRows(dir, p, meta.DryRun, writers, func(add func(Row)) error {
		return each(func(r Row) error {
			t.add(r, meta.Aborted != "")
			add(r)
			return nil
		})
	}, func() { summary = t.summary(meta) })
	if err != nil {
		return Paths{}, summary, err
	}
	return p, summary, nil
}

// rowWriter writes one report file from rows that come in batches until the channel closes.
type rowWriter[R any] struct {
	kind, path string
	write      func(w io.Writer, rows <-chan []R) error
}

// streamRows hands the rows each adds, in batches, to every writer, each writing its file
// through atomicfile as they come; ended is called once each has returned, before the writers
// see the rows end. Without the folder the rows are still read to the end: what they add up to
// is the caller's result. On any error every file of p is removed.
func streamRows[R any](dir string, p Paths, unsynced bool, writers []rowWriter[R], each func(add func(R)) error, ended func()) error {
	errs := make([]error, len(writers)+2)
	if err := os.MkdirAll(dir, dirMode); err != nil {
		errs[len(writers)+1] = fmt.Errorf("create report dir: %w", err)
		writers = nil
	}
	chans := make([]chan []R, len(writers))
	var wg sync.WaitGroup
	for i, wr := range writers {
		chans[i] = make(chan []R, 4)
		wg.Add(1)
		go func() {
			defer wg.Done()
			write := atomicfile.Write
			if unsynced {
				write = atomicfile.WriteUnsynced
			}
			err := write(wr.path, fileMode, func(w io.Writer) error { return wr.write(w, chans[i]) })
			for range chans[i] {
				// A writer that failed still drains its rows, so that the others go on.
			}
			if err != nil {
				errs[i] = fmt.Errorf("write %s report: %w", wr.kind, err)
			}
		}()
	}
	batch := make([]R, 0, batchRows)
	send := func() {
		for _, ch := range chans {
			ch <- batch
		}
		batch = make([]R, 0, batchRows)
	}
	errs[len(errs)-2] = each(func(r R) {
		batch = append(batch, r)
		if len(batch) == batchRows {
			send()
		}
	})
	if len(batch) > 0 {
		send()
	}
	ended()
	for _, ch := range chans {
		close(ch)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, path := range p.List() {
			_ = os.Remove(path)
		}
		return err
	}
	return nil
}

// runPaths names a run's three reports.
func runPaths(dir, inputName string, s Summary) (Paths, error) {
	base := strings.TrimSuffix(filepath.Base(inputName), filepath.Ext(inputName))
	if base == "" || base == "." || base == string(filepath.Separator) {
		base = "payout"
	}
	if err := checkName(s.RunID); err != nil {
		return Paths{}, err
	}
	stem := filepath.Join(dir, base+"."+s.RunID)
	if !s.Regenerated.IsZero() {
		// Never over the run's own reports: they are the record of what the run saw.
		stem += ".regenerated-" + runid.Stamp(s.Regenerated)
	}
	return Paths{CSV: stem + ".result.csv", XLSX: stem + ".result.xlsx", HTML: stem + ".report.html"}, nil
}

func writeCSVStream(w io.Writer, rows <-chan []Row) error {
	return writeCSVRows(w, runTable(), runCells, rows)
}

// writeCSVRows writes the CSV of table t from rows as they arrive, each made into cells by cells.
func writeCSVRows[R any](w io.Writer, t table, cells func(R, []cell) []cell, rows <-chan []R) error {
	return t.writeCSVFrom(w, func(emit func([]cell) error) error {
		var buf []cell
		for batch := range rows {
			for _, r := range batch {
				buf = cells(r, buf)
				if err := emit(buf); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// writeRunXLSX writes the Rows sheets as rows arrive, then the Summary sheet. A report of more
// than XLSXListLimit rows lists only the rows that need attention.
func writeRunXLSX(w io.Writer, rows <-chan []Row, dryRun bool, summary func() Summary) error {
	return writeListXLSX(w, runTable(), rows, listing[Row]{
		cells:     runCells,
		attention: func(r Row) bool { return attentionRank(r.State, dryRun) <= attentionMax },
		summary:   func() [][]cell { return runSummaryCells(summary()) },
		csvName:   ".result.csv",
	})
}

// listing says how writeListXLSX lists a report's rows of type R.
type listing[R any] struct {
	cells     func(r R, buf []cell) []cell
	attention func(r R) bool
	summary   func() [][]cell // the Summary sheet, asked for once every row has arrived
	csvName   string          // how the note names the CSV report, which lists every row
}

// writeListXLSX writes the Rows sheets of t as rows arrive, then the Summary sheet. A report of
// more than XLSXListLimit rows lists there only the rows that need attention, and says so.
func writeListXLSX[R any](w io.Writer, t table, rows <-chan []R, l listing[R]) error {
	x, err := newXLSXStream(t)
	if err != nil {
		return err
	}
	defer x.close()
	var held heldRows // the first rows, until it is known whether they are all listed
	seen, listed := 0, 0
	var buf []cell
	put := func(cells []cell) error {
		listed++
		return x.add(cells)
	}
	putAttention := func(cells []cell, attention bool) error {
		if !attention {
			return nil
		}
		return put(cells)
	}
	for batch := range rows {
		for _, r := range batch {
			seen++
			attention := l.attention(r)
			switch {
			case seen <= XLSXListLimit:
				buf = l.cells(r, buf)
				held.add(buf, attention)
			case seen == XLSXListLimit+1:
				err = held.each(putAttention)
				held = heldRows{}
				fallthrough
			default:
				if err == nil && attention {
					buf = l.cells(r, buf)
					err = put(buf)
				}
			}
			if err != nil {
				return err
			}
		}
	}
	if err := held.each(func(cells []cell, _ bool) error { return put(cells) }); err != nil {
		return err
	}
	cells := l.summary()
	if listed < seen {
		cells = append([][]cell{{text(fmt.Sprintf("The sheet %q lists the %d of %d rows that need attention: a report of more than %d rows lists no others here. The %s lists every row.",
			SheetRows, listed, seen, XLSXListLimit, l.csvName))}, {}}, cells...)
	}
	return x.finish(w, cells)
}

// xlsxStream writes a table's rows into the Rows sheets through excelize's StreamWriter as they
// come, going on to "Rows 2" and so on at the sheet's row limit.
type xlsxStream struct {
	f      *excelize.File
	st     styles
	t      table
	widths []float64 // t's, in the sheet's order
	sw     *excelize.StreamWriter
	sheet  int
	row    int // rows written to the current sheet, header included
	cells  []cell
	values []any
}

func newXLSXStream(t table) (*xlsxStream, error) {
	f := excelize.NewFile()
	if err := f.SetSheetName("Sheet1", SheetRows); err != nil {
		f.Close()
		return nil, err
	}
	st, err := newStyles(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	x := &xlsxStream{f: f, st: st, t: t, widths: t.widths()}
	if err := x.nextSheet(); err != nil {
		f.Close()
		return nil, err
	}
	return x, nil
}

func (x *xlsxStream) close() { x.f.Close() }

// nextSheet flushes the current Rows sheet, if any, and starts the next with its header.
func (x *xlsxStream) nextSheet() error {
	if x.sw != nil {
		if err := x.sw.Flush(); err != nil {
			return err
		}
	}
	x.sheet++
	name := rowsSheetName(x.sheet)
	if x.sheet > 1 {
		if _, err := x.f.NewSheet(name); err != nil {
			return err
		}
	}
	if err := setUpPrinting(x.f, name, printSetup{headerRow: true, columns: x.t.printed}); err != nil {
		return err
	}
	sw, err := x.f.NewStreamWriter(name)
	if err != nil {
		return err
	}
	for i, width := range x.widths {
		if err := sw.SetColWidth(i+1, i+1, width); err != nil {
			return err
		}
	}
	if err := sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
		return err
	}
	titles := x.t.titles()
	header := make([]any, len(titles))
	for j, h := range titles {
		header[j] = excelize.Cell{StyleID: x.st.header, Value: h}
	}
	x.sw, x.row = sw, 1
	if h := headingHeight(titles, x.widths); h > 0 {
		return sw.SetRow("A1", header, excelize.RowOpts{Height: h})
	}
	return sw.SetRow("A1", header)
}

func (x *xlsxStream) add(cells []cell) error {
	if x.row > sheetRowsMax {
		if err := x.nextSheet(); err != nil {
			return err
		}
	}
	x.row++
	x.cells = x.t.sheetCells(cells, x.cells)
	x.values = streamCells(x.values, x.cells, x.st)
	ref, err := excelize.CoordinatesToCellName(1, x.row)
	if err != nil {
		return err
	}
	if h := wrappedHeight(x.cells, x.widths); h > 0 {
		return x.sw.SetRow(ref, x.values, excelize.RowOpts{Height: h})
	}
	return x.sw.SetRow(ref, x.values)
}

// finish flushes the last Rows sheet, adds the Summary sheet and writes the workbook. The Rows
// sheet stays the active one: NewSheet does not change it, and SetActiveSheet would parse the
// whole streamed sheet back. The archive goes straight to w: excelize would otherwise build the
// whole file in memory first, as large as the rows listed.
func (x *xlsxStream) finish(w io.Writer, summary [][]cell) error {
	if err := x.sw.Flush(); err != nil {
		return err
	}
	if err := writeSummarySheet(x.f, x.st, summary); err != nil {
		return err
	}
	x.f.SetZipWriter(func(io.Writer) excelize.ZipWriter { return zip.NewWriter(w) })
	return x.f.Write(w)
}
