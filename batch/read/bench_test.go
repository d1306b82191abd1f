package read_test

import (
	"encoding/csv"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch/read"
	"github.com/xuri/excelize/v2"
)

// heapPeak samples HeapInuse every few thousand rows: cheap enough not to skew throughput.
// HeapInuse also holds garbage the collector has not reached yet, so it moves with GC timing
// (and with whatever else the two cores do); live is the largest heap the collector found
// live, the steadier figure of what the reader keeps.
type heapPeak struct{ peak, live uint64 }

func (h *heapPeak) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h.peak = max(h.peak, ms.HeapInuse)
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	h.live = max(h.live, live[0].Value.Uint64())
}

func startPeak() *heapPeak {
	runtime.GC()
	h := &heapPeak{}
	h.sample()
	return h
}

func reportRate(b *testing.B, rows int, h *heapPeak) {
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(h.peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(h.live)/(1<<20), "peak-live-MiB")
}

// readValidate is the reading half of a run: every row read and checked.
func readValidate(b *testing.B, path string, h *heapPeak) int {
	rd, err := read.OpenFile(path, read.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer rd.Close()
	v := read.NewValidator(read.ValidateOptions{Providers: sandbox.DefaultProviders(), DefaultDescription: "Salary"})
	n := 0
	for {
		row, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		if _, errs := v.Check(row); len(errs) > 0 {
			b.Fatal(errs[0])
		}
		if n++; n%16384 == 0 {
			h.sample()
		}
	}
	found := v.Finish()
	if len(found.Duplicates)+len(found.File) > 0 {
		b.Fatal(found)
	}
	h.sample()
	return n
}

// BenchmarkReadCSV: a generated 1,000,000-row CSV, raw encoding/csv beside read+validate.
// PAYOUT_BENCH_CSV_ROWS sets another length, to see that the heap stays flat.
func BenchmarkReadCSV(b *testing.B) {
	rows := 1_000_000
	if n, err := strconv.Atoi(os.Getenv("PAYOUT_BENCH_CSV_ROWS")); err == nil && n > 0 {
		rows = n
	}
	path := filepath.Join(b.TempDir(), "big.csv")
	genCSV(b, path, rows)
	b.Run("raw-encoding-csv", func(b *testing.B) {
		h := startPeak()
		for range b.N {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			r := csv.NewReader(f)
			r.ReuseRecord = true
			n := 0
			for {
				_, err := r.Read()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				if n++; n%16384 == 0 {
					h.sample()
				}
			}
			f.Close()
		}
		reportRate(b, rows, h)
	})
	b.Run("read-validate", func(b *testing.B) {
		h := startPeak()
		for range b.N {
			if n := readValidate(b, path, h); n != rows {
				b.Fatalf("%d rows", n)
			}
		}
		reportRate(b, rows, h)
	})
}

// BenchmarkReadXLSX: a generated 200,000-row workbook, excelize's raw row iterator beside
// read+validate.
func BenchmarkReadXLSX(b *testing.B) {
	const rows = 200_000
	path := filepath.Join(b.TempDir(), "big.xlsx")
	genXLSX(b, path, rows)
	b.Run("raw-excelize-rows", func(b *testing.B) {
		h := startPeak()
		for range b.N {
			f, err := excelize.OpenFile(path)
			if err != nil {
				b.Fatal(err)
			}
			it, err := f.Rows("Sheet1")
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for it.Next() {
				if _, err := it.Columns(); err != nil {
					b.Fatal(err)
				}
				if n++; n%16384 == 0 {
					h.sample()
				}
			}
			it.Close()
			f.Close()
		}
		reportRate(b, rows, h)
	})
	b.Run("read-validate", func(b *testing.B) {
		h := startPeak()
		for range b.N {
			if n := readValidate(b, path, h); n != rows {
				b.Fatalf("%d rows", n)
			}
		}
		reportRate(b, rows, h)
	})
}

// TestReadValidateGeneratedFiles is the short form of the benchmarks: generated files read back
// whole, every row valid.
func TestReadValidateGeneratedFiles(t *testing.T) {
	t.Parallel()
	for _, ext := range []string{"csv", "xlsx"} {
		t.Run(ext, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "gen."+ext)
			n := 10_000
			if ext == "xlsx" {
				n = 2_000
				genXLSX(t, path, n)
			} else {
				genCSV(t, path, n)
			}
			res, err := readInput(t, path, read.Options{}, read.ValidateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.errs) != 0 || len(res.payments) != n {
				t.Fatalf("%d payments, errors %v", len(res.payments), res.errs[:min(3, len(res.errs))])
			}
		})
	}
}
