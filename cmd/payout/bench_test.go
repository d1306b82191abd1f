package main_test

// Process-level benchmarks: every figure is a whole process (the built binary, a sandbox process,
// or this test binary run again as a raw reader), timed by its wall clock and measured by its peak
// resident set as the kernel reports it, over files generated here and never committed. Each
// measurement runs PAYOUT_PERF_REPEAT times (3) in one sitting, side by side with its baseline,
// and the median is reported:
//
//	s/op            wall time of the command, seconds
//	peak-RSS-MiB    the command's peak resident set, as GNU time (/usr/bin/time) reports it
//	ratio-vs-raw    the command's wall time over the raw reader's on the same file
//
// Sizes come from the environment: PAYOUT_PERF_DRYRUN_ROWS (1,000,000), PAYOUT_PERF_ROWS
// (100,000: the real run, its rerun and reconcile), PAYOUT_PERF_XLSX_ROWS (100,000),
// PAYOUT_PERF_LEDGER_PAYOUTS (2,000,000), PAYOUT_PERF_LEDGER_RUN_ROWS (1,000).
//
//	make perf
//	PAYOUT_PERF_ROWS=20000 go test -run '^$' -bench PerfRunRerun -benchtime 1x ./cmd/payout/

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/payout/payout/batch/read"

	"github.com/payout/payout/api/sandbox"
)

// The raw reader: a process of this test binary that reads PAYOUT_BENCH_RAW_FILE as a CSV or
// XLSX (PAYOUT_BENCH_RAW) and does nothing else, the baseline of a dry run.
const (
	rawEnv     = "PAYOUT_BENCH_RAW"
	rawFileEnv = "PAYOUT_BENCH_RAW_FILE"
)

// rawReaderMain runs the raw reader when this process was started as one, and reports whether
// it was.
func rawReaderMain() (int, bool) {
	kind := os.Getenv(rawEnv)
	if kind == "" {
		return 0, false
	}
	var n int
	var err error
	switch kind {
	case "csv":
		n, err = rawCSV(os.Getenv(rawFileEnv))
	case "xlsx":
		n, err = rawXLSX(os.Getenv(rawFileEnv))
	case "reader":
		n, err = payoutReader(os.Getenv(rawFileEnv))
	default:
		err = fmt.Errorf("unknown raw reader %q: want csv or xlsx", kind)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1, true
	}
	fmt.Println(n)
	return 0, true
}

// rawCSV reads every record of the file with encoding/csv and counts them.
func rawCSV(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	n := 0
	for {
		if _, err := r.Read(); errors.Is(err, io.EOF) {
			return n, nil
		} else if err != nil {
			return n, err
		}
		n++
	}
}

// rawXLSX reads every row of the workbook's active sheet with excelize's Rows and counts them.
func rawXLSX(path string) (int, error) {
	f, err := excelize.OpenFile(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	rows, err := f.Rows(f.GetSheetName(f.GetActiveSheetIndex()))
	if err != nil {
		return 0, err
	}
	n := 0
	for rows.Next() {
		if _, err := rows.Columns(); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Close()
}

// payoutReader reads every row of the file with payout's own reader (read.OpenFile), as every
// pass of a run does, and counts them with the header.
func payoutReader(path string) (int, error) {
	rd, err := read.OpenFile(path, read.Options{})
	if err != nil {
		return 0, err
	}
	defer rd.Close()
	n := 1
	for {
		if _, err := rd.Next(); errors.Is(err, io.EOF) {
			return n, nil
		} else if err != nil {
			return n, err
		}
		n++
	}
}

// perfInt is a size from the environment, or def.
func perfInt(name string, def int) int {
	if n, err := strconv.Atoi(strings.ReplaceAll(os.Getenv(name), "_", "")); err == nil && n > 0 {
		return n
	}
	return def
}

func perfRepeat() int { return perfInt("PAYOUT_PERF_REPEAT", 3) }

// sample is one process's wall time and peak resident set.
type sample struct {
	wall   time.Duration
	rssKiB int64
	stdout string
}

// gnuTime is GNU time, which reports the peak resident set of the one process it starts. The
// kernel's figure for a child of this process would not do: a child inherits, at its exec, the
// peak of the process that started it, and a benchmark that generated a file is large.
const gnuTime = "/usr/bin/time"

// measure runs cmd to its end and returns its sample; an exit code other than want fails the
// benchmark with what the process said. Without GNU time the peak resident set is 0 (logged).
func measure(tb testing.TB, cmd *exec.Cmd, want int) sample {
	tb.Helper()
	rssFile := filepath.Join(tb.TempDir(), "maxrss")
	_, err := os.Stat(gnuTime)
	timed := err == nil
	if timed {
		cmd.Args = append([]string{gnuTime, "-f", "%M", "-o", rssFile, cmd.Path}, cmd.Args[1:]...)
		cmd.Path = gnuTime
	} else {
		tb.Logf("%s not found: peak RSS not measured (install GNU time)", gnuTime)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		tb.Fatalf("%v: %v", cmd.Args, err)
	}
	if code := cmd.ProcessState.ExitCode(); code != want {
		tb.Fatalf("%v: exit %d, want %d\nstdout: %s\nstderr: %s", cmd.Args, code, want, tail(stdout.String()), tail(stderr.String()))
	}
	s := sample{wall: wall, stdout: stdout.String()}
	if timed {
		s.rssKiB = peakKiB(tb, rssFile)
	}
	return s
}

// peakKiB reads GNU time's report: the peak in KiB on its last line (a line before it says
// when the command exited with a status other than 0).
func peakKiB(tb testing.TB, path string) int64 {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	n, err := strconv.ParseInt(strings.TrimSpace(lines[len(lines)-1]), 10, 64)
	if err != nil {
		tb.Fatalf("GNU time reported %q: %v", b, err)
	}
	return n
}

func tail(s string) string {
	if len(s) > 4000 {
		return "..." + s[len(s)-4000:]
	}
	return s
}

// rawRead runs the raw reader of kind over path and checks that it read rows data rows.
func rawRead(tb testing.TB, kind, path string, rows int) sample {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), rawEnv+"="+kind, rawFileEnv+"="+path)
	s := measure(tb, cmd, 0)
	if got := strings.TrimSpace(s.stdout); got != strconv.Itoa(rows+1) {
		tb.Fatalf("raw %s reader read %s records of %s, want %d", kind, got, path, rows+1)
	}
	return s
}

// medians are the medians of several samples of one measurement.
type medians struct {
	wall time.Duration
	rss  int64
}

func medianOf(samples []sample) medians {
	walls := make([]time.Duration, len(samples))
	rss := make([]int64, len(samples))
	for i, s := range samples {
		walls[i], rss[i] = s.wall, s.rssKiB
	}
	slices.Sort(walls)
	slices.Sort(rss)
	return medians{wall: walls[len(walls)/2], rss: rss[len(rss)/2]}
}

// report puts one measurement's medians among the benchmark's metrics, its names prefixed.
func (m medians) report(b *testing.B, prefix string) {
	b.ReportMetric(m.wall.Seconds(), prefix+"s/op")
	b.ReportMetric(float64(m.rss)/1024, prefix+"peak-RSS-MiB")
}

// perfBanks are the names of the sandbox's providers, as a payroll file names its banks.
func perfBanks() []string {
	var names []string
	for _, p := range sandbox.DefaultProviders() {
		names = append(names, p.Name)
	}
	return names
}

// perfRow is the i-th row of a generated payroll: a unique reference under prefix, a provider
// the sandbox lists, an account of digits that never fails, and an amount with cents.
func perfRow(prefix string, i int, banks []string) [6]string {
	// Each prefix pays its own accounts: files of one sitting are not repeats of each other.
	h := fnv.New32a()
	h.Write([]byte(prefix))
	return [6]string{
		fmt.Sprintf("%s-%08d", prefix, i+1), fmt.Sprintf("Employee %d", i+1), banks[i%len(banks)],
		fmt.Sprintf("1%03d%08d", h.Sum32()%1000, i), fmt.Sprintf("%d.%02d", 100+i%5000, i%100), "Salary November",
	}
}

var perfHeader = []string{"external_invoice_ref", "recipient_reference", "bank", "third_party_account_no", "amount", "payment_description"}

// writePerfCSV writes a payroll CSV of n rows at path.
func writePerfCSV(tb testing.TB, path, prefix string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(strings.Join(perfHeader, ",") + "\r\n")
	banks := perfBanks()
	for i := range n {
		r := perfRow(prefix, i, banks)
		w.WriteString(strings.Join(r[:], ",") + "\r\n")
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		tb.Fatal(err)
	}
}

// writePerfXLSX writes a payroll workbook of n rows at path with excelize's stream writer:
// accounts as text, amounts as numbers, as spreadsheets hold them.
func writePerfXLSX(tb testing.TB, path, prefix string, n int) {
	tb.Helper()
	f := excelize.NewFile()
	defer f.Close()
	sw, err := f.NewStreamWriter("Sheet1")
	if err != nil {
		tb.Fatal(err)
	}
	header := make([]any, len(perfHeader))
	for i, h := range perfHeader {
		header[i] = h
	}
	if err := sw.SetRow("A1", header); err != nil {
		tb.Fatal(err)
	}
	banks := perfBanks()
	for i := range n {
		r := perfRow(prefix, i, banks)
		amount, err := strconv.ParseFloat(r[4], 64)
		if err != nil {
			tb.Fatal(err)
		}
		cell, _ := excelize.CoordinatesToCellName(1, i+2)
		if err := sw.SetRow(cell, []any{r[0], r[1], r[2], r[3], amount, r[5]}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := sw.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.SaveAs(path); err != nil {
		tb.Fatal(err)
	}
}

// perfSandbox starts `payout sandbox` on a free loopback port with no latency, no failures and
// no callbacks; payouts stay PENDING for settleAfter. It returns the service's base URL.
func perfSandbox(tb testing.TB, settleAfter time.Duration) string {
	tb.Helper()
	cmd := exec.Command(binPath, "sandbox", "--listen", "127.0.0.1:0", "--callbacks=false", "--fail-suffix", "",
		"--settle-after", settleAfter.String())
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tb.TempDir(), "PAYOUT_AUTH_TOKEN=perf-token", "PAYOUT_HASH_KEY=perf-hash-key"}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), "sandbox listening on "); ok {
			go io.Copy(io.Discard, stderr) // whatever it says later must not block it
			return strings.Fields(rest)[0]
		}
	}
	tb.Fatalf("the sandbox did not say where it listens: %v", lines.Err())
	return ""
}

// perfUser runs the binary in its own folder against a sandbox process, at rate inf, with the
// pool left to size itself.
type perfUser struct {
	tb  testing.TB
	dir string
	env []string
}

func newPerfUser(tb testing.TB, baseURL string) *perfUser {
	tb.Helper()
	dir := tb.TempDir()
	u := &perfUser{tb: tb, dir: dir, env: []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir,
		"PAYOUT_BASE_URL=" + baseURL, "PAYOUT_AUTH_TOKEN=perf-token", "PAYOUT_VIRTUAL_POOL_REF=POOL-PERF",
		"PAYOUT_CALLBACK_URL=http://127.0.0.1:1/callback", "PAYOUT_REDIRECT_URL=http://127.0.0.1:1/return",
		"PAYOUT_RATE=inf", "PAYOUT_LEDGER=" + filepath.Join(dir, "ledger.db"),
	}}
	return u
}

func (u *perfUser) ledger() string { return filepath.Join(u.dir, "ledger.db") }

// run runs one command of the binary and measures it; want is its expected exit code.
func (u *perfUser) run(want int, args ...string) sample {
	u.tb.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir, cmd.Env = u.dir, u.env
	return measure(u.tb, cmd, want)
}

func (u *perfUser) init() {
	u.tb.Helper()
	u.run(0, "init")
}

// ledgerBytes is the size of the ledger's files (the database and its write-ahead log) once no
// process has it open.
func ledgerBytes(tb testing.TB, path string) int64 {
	tb.Helper()
	var total int64
	for _, p := range []string{path, path + "-wal"} {
		info, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			tb.Fatal(err)
		}
		total += info.Size()
	}
	return total
}

// BenchmarkPerfDryRunCSV: `payout run --dry-run` of a CSV of PAYOUT_PERF_DRYRUN_ROWS rows against
// an empty ledger, beside a raw encoding/csv process reading the same file.
func BenchmarkPerfDryRunCSV(b *testing.B) {
	rows := perfInt("PAYOUT_PERF_DRYRUN_ROWS", 1_000_000)
	u := newPerfUser(b, perfSandbox(b, 0))
	u.init()
	file := filepath.Join(u.dir, "dry.csv")
	writePerfCSV(b, file, "DRY", rows)
	for range b.N {
		dryRunBeside(b, u, file, "csv", rows)
	}
}

// BenchmarkPerfDryRunXLSX: `payout run --dry-run` of a workbook of PAYOUT_PERF_XLSX_ROWS rows,
// beside a raw excelize Rows() process reading the same file, and payout's own reader (every
// check of a cell's type, style and formula, without the ledger, validation or reports) as a
// process too: reader-peak-RSS-MiB, and its ratio to raw.
func BenchmarkPerfDryRunXLSX(b *testing.B) {
	rows := perfInt("PAYOUT_PERF_XLSX_ROWS", 100_000)
	u := newPerfUser(b, perfSandbox(b, 0))
	u.init()
	file := filepath.Join(u.dir, "dry.xlsx")
	writePerfXLSX(b, file, "XDRY", rows)
	for range b.N {
		raw := dryRunBeside(b, u, file, "xlsx", rows)
		var reader []sample
		for range perfRepeat() {
			reader = append(reader, rawRead(b, "reader", file, rows))
		}
		r := medianOf(reader)
		r.report(b, "reader-")
		b.ReportMetric(float64(r.rss)/float64(raw.rss), "reader-RSS-vs-raw")
	}
}

// dryRunBeside measures the dry run of file and the raw reader of kind over it, alternately,
// reports both and their ratio, and returns the raw reader's medians.
func dryRunBeside(b *testing.B, u *perfUser, file, kind string, rows int) medians {
	var dry, raw []sample
	for range perfRepeat() {
		dry = append(dry, u.run(0, "run", "--dry-run", "--max-rows", strconv.Itoa(rows), "--report-dir", filepath.Join(u.dir, "reports"), file))
		raw = append(raw, rawRead(b, kind, file, rows))
	}
	d, r := medianOf(dry), medianOf(raw)
	d.report(b, "")
	r.report(b, "raw-")
	b.ReportMetric(d.wall.Seconds()/r.wall.Seconds(), "ratio-vs-raw")
	b.ReportMetric(float64(rows)/d.wall.Seconds(), "rows/s")
	return r
}

// BenchmarkPerfRunRerun: a real `payout run` of PAYOUT_PERF_ROWS rows at rate inf into an empty
// ledger, then a rerun of the same finished file, what the rerun added to the ledger's files, and a
// dry run of that file: the rerun/dryrun ratio says what resuming a paid file costs over checking it.
// Each repeat starts from a new ledger and refs the sandbox has not seen.
func BenchmarkPerfRunRerun(b *testing.B) {
	rows := perfInt("PAYOUT_PERF_ROWS", 100_000)
	base := perfSandbox(b, 0)
	for range b.N {
		var runs, reruns, dryRuns []sample
		var growth, size []int64
		for i := range perfRepeat() {
			u := newPerfUser(b, base)
			u.init()
			file := filepath.Join(u.dir, "pay.csv")
			writePerfCSV(b, file, fmt.Sprintf("RUN%d", i), rows)
			args := []string{"run", "--max-rows", strconv.Itoa(rows), "--report-dir", filepath.Join(u.dir, "reports"), file}
			runs = append(runs, u.run(0, args...))
			before := ledgerBytes(b, u.ledger())
			reruns = append(reruns, u.run(0, args...))
			after := ledgerBytes(b, u.ledger())
			growth, size = append(growth, after-before), append(size, before)
			// The same finished file checked without paying: what a rerun that sends nothing is
			// measured against.
			dryRuns = append(dryRuns, u.run(0, append([]string{"run", "--dry-run"}, args[1:]...)...))
		}
		run, rerun, dryRun := medianOf(runs), medianOf(reruns), medianOf(dryRuns)
		run.report(b, "run-")
		rerun.report(b, "rerun-")
		dryRun.report(b, "dryrun-")
		b.ReportMetric(rerun.wall.Seconds()/dryRun.wall.Seconds(), "rerun/dryrun")
		b.ReportMetric(float64(rows)/run.wall.Seconds(), "run-payouts/s")
		b.ReportMetric(float64(medianInt(growth)), "rerun-ledger-growth-B")
		b.ReportMetric(float64(medianInt(size))/float64(rows), "ledger-B/payout")
	}
}

// BenchmarkPerfReconcilePending: `payout reconcile` of PAYOUT_PERF_ROWS payouts that the service
// keeps PENDING, so that every repeat looks each of them up again.
func BenchmarkPerfReconcilePending(b *testing.B) {
	rows := perfInt("PAYOUT_PERF_ROWS", 100_000)
	u := newPerfUser(b, perfSandbox(b, 1000*time.Hour))
	u.init()
	file := filepath.Join(u.dir, "pending.csv")
	writePerfCSV(b, file, "PEND", rows)
	u.run(0, "run", "--max-rows", strconv.Itoa(rows), "--report-dir", filepath.Join(u.dir, "reports"), file)
	for range b.N {
		var recs []sample
		for range perfRepeat() {
			// Exit 4: the payouts are still pending, as the sandbox keeps them.
			recs = append(recs, u.run(4, "reconcile", "--report-dir", filepath.Join(u.dir, "reports")))
		}
		m := medianOf(recs)
		m.report(b, "")
		b.ReportMetric(float64(rows)/m.wall.Seconds(), "lookups/s")
	}
}

func medianInt(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
