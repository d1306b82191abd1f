package watch_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/batch/pool"
	"github.com/payout/payout/batch/runs"
	"github.com/payout/payout/batch/watch"
)

// watchRig is a watched folder over a test harness, with the outcomes and logs it produced.
type watchRig struct {
	*batchtest.Harness
	root     string
	w        *watch.Watcher
	logs     *batchtest.LogBuffer
	mu       sync.Mutex
	outcomes []watch.FileOutcome
	// finished is sent to, without blocking, once a file's outcome is in outcomes.
	finished chan struct{}
}

func newWatchRig(tb testing.TB, h *batchtest.Harness, settle time.Duration, now func() time.Time) *watchRig {
	tb.Helper()
	rig := &watchRig{Harness: h, root: filepath.Join(h.Dir, "watched"), logs: &batchtest.LogBuffer{}, finished: make(chan struct{}, 1)}
	w, err := watch.New(watch.Config{
		Dir: rig.root, Runner: batch.NewRunner(h.Cfg), Ledger: h.DB, Settle: settle, Interval: 5 * time.Millisecond,
		Now: now, Logger: slog.New(slog.NewTextHandler(rig.logs, nil)),
		Done: func(out watch.FileOutcome) {
			rig.mu.Lock()
			defer rig.mu.Unlock()
			rig.outcomes = append(rig.outcomes, out)
			select {
			case rig.finished <- struct{}{}:
			default:
			}
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { w.Close() })
	rig.w = w
	return rig
}

func (r *watchRig) path(sub, name string) string { return filepath.Join(r.root, sub, name) }

func (r *watchRig) results() []watch.FileOutcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]watch.FileOutcome(nil), r.outcomes...)
}

// listDir names the files of one folder of the watched directory.
func (r *watchRig) listDir(sub string) []string {
	r.TB.Helper()
	entries, err := os.ReadDir(filepath.Join(r.root, sub))
	if err != nil {
		r.TB.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func (r *watchRig) poll() int {
	r.TB.Helper()
	exit, err := r.w.Poll(context.Background())
	if err != nil {
		r.TB.Fatalf("poll: %v", err)
	}
	return exit
}

func (r *watchRig) assertCreatedOnce(rows []batchtest.PayrollRow) {
	r.TB.Helper()
	counts := r.Sandbox.CreateCounts()
	for _, row := range rows {
		if counts[row.Ref] != 1 {
			r.TB.Errorf("%s created %d times by the service, want exactly 1", row.Ref, counts[row.Ref])
		}
	}
	if dups := r.Sandbox.Duplicates(); len(dups) > 0 {
		r.TB.Errorf("paid twice: %v", dups)
	}
}

func watchCSV(rows []batchtest.PayrollRow) []byte {
	var b strings.Builder
	b.WriteString("external_invoice_ref,recipient_reference,bank,third_party_account_no,amount,payment_description\r\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%s,%s,%s,%s,%s,Salary November\r\n", r.Ref, r.Name, r.Bank, r.Account, r.Amount)
	}
	return []byte(b.String())
}

func watchPut(tb testing.TB, path string, data []byte) {
	tb.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatal(err)
	}
}

func watchAppend(tb testing.TB, path string, data []byte) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

func TestWatchCreatesFolders(t *testing.T) {
	t.Parallel()
	rig := newWatchRig(t, batchtest.NewHarness(t, sandbox.Options{}), 0, nil)
	for _, sub := range []string{watch.InboxDir, watch.ProcessingDir, watch.DoneDir, watch.FailedDir, watch.ReportsDir} {
		info, err := os.Stat(filepath.Join(rig.root, sub))
		if err != nil || !info.IsDir() || info.Mode().Perm() != 0o750 {
			t.Errorf("%s: %v, %v; want a 0750 folder", sub, info, err)
		}
	}
}

func TestWatchDoesNotClaimAFileStillBeingWritten(t *testing.T) {
	t.Parallel()
	const settle = 10 * time.Second
	clock := batchtest.NewClock(time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)) // moved by hand: settling is decided without sleeping
	rig := newWatchRig(t, batchtest.NewHarness(t, sandbox.Options{}), settle, clock.Now)
	rows := batchtest.Payroll(9, "SLOW")
	data := watchCSV(rows)
	inbox := rig.path(watch.InboxDir, "slow.csv")
	// Cut mid-line, as a copy tool would.
	chunks := [][]byte{data[:len(data)/3], data[len(data)/3 : 2*len(data)/3], data[2*len(data)/3:]}

	stillInInbox := func(step string) {
		t.Helper()
		if rig.poll() != exitcode.OK {
			t.Fatalf("%s: poll exit, want 0", step)
		}
		if _, err := os.Stat(inbox); err != nil {
			t.Fatalf("%s: claimed early: %v", step, err)
		}
		if n := rig.Sandbox.Stats().Creates; n != 0 {
			t.Fatalf("%s: %d payouts sent from a file still being written", step, n)
		}
	}
	watchAppend(t, inbox, chunks[0])
	stillInInbox("first chunk, just seen")
	clock.Advance(settle - time.Second)
	stillInInbox("first chunk, not yet settled")
	watchAppend(t, inbox, chunks[1])
	clock.Advance(2 * time.Second) // past the settle time since first seen, but the file grew
	stillInInbox("second chunk")
	clock.Advance(settle - time.Second)
	stillInInbox("second chunk, not yet settled")

	// Same size, new content and modification time: still a change.
	partial := append(append([]byte(nil), chunks[0]...), chunks[1]...)
	partial[len(partial)-1] = 'X'
	watchPut(t, inbox, partial)
	info, err := os.Stat(inbox)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(inbox, info.ModTime(), info.ModTime().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Second)
	stillInInbox("rewritten in place")

	watchPut(t, inbox, append(append([]byte(nil), chunks[0]...), chunks[1]...))
	watchAppend(t, inbox, chunks[2])
	clock.Advance(time.Second)
	stillInInbox("last chunk")
	clock.Advance(settle - time.Second)
	stillInInbox("complete, one second short of the settle time")

	clock.Advance(time.Second)
	if exit := rig.poll(); exit != exitcode.OK {
		t.Fatalf("poll after settling: exit %d, want 0; logs:\n%s", exit, rig.logs)
	}
	if got := rig.listDir(watch.DoneDir); len(got) != 1 || got[0] != "slow.csv" {
		t.Fatalf("done holds %v, want slow.csv", got)
	}
	if got := rig.listDir(watch.InboxDir); len(got) != 0 {
		t.Errorf("inbox still holds %v", got)
	}
	outs := rig.results()
	if len(outs) != 1 || outs[0].Result.Rows != len(rows) || outs[0].Exit != exitcode.OK {
		t.Fatalf("outcomes %+v, want one file of %d rows paid", outs, len(rows))
	}
	rig.assertCreatedOnce(rows)
}

func TestWatchIgnoresPartialAndForeignFiles(t *testing.T) {
	t.Parallel()
	rig := newWatchRig(t, batchtest.NewHarness(t, sandbox.Options{}), 0, nil)
	data := watchCSV(batchtest.Payroll(2, "PART"))
	names := []string{
		".hidden.csv", "~$payroll.xlsx", "payroll.csv.tmp", "payroll.tmp", "payroll.csv.part",
		"payroll.csv.crdownload", ".payroll.csv.swp", "payroll.csv.swp", "notes.txt", "payroll.xls",
	}
	for _, name := range names {
		watchPut(t, rig.path(watch.InboxDir, name), data)
	}
	if err := os.Mkdir(rig.path(watch.InboxDir, "folder.csv"), 0o750); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		rig.poll()
	}
	if got := rig.listDir(watch.InboxDir); len(got) != len(names)+1 {
		t.Errorf("inbox holds %v, want every file left where it was", got)
	}
	if outs := rig.results(); len(outs) != 0 {
		t.Errorf("processed %+v, want nothing", outs)
	}
	if n := rig.Sandbox.Stats().Creates; n != 0 {
		t.Errorf("%d payouts sent", n)
	}
	logs := rig.logs.String()
	for _, name := range []string{"notes.txt", "payroll.xls", "folder.csv"} {
		if n := strings.Count(logs, "file="+name); n != 1 {
			t.Errorf("%s warned about %d times over 3 polls, want once; logs:\n%s", name, n, logs)
		}
	}
	for _, name := range []string{"payroll.csv.part", "~$payroll.xlsx", ".hidden.csv"} {
		if strings.Contains(logs, name) {
			t.Errorf("partial file %s was warned about: partial files are expected", name)
		}
	}
}

func TestWatchOncePaysGoodFilesAndExplainsBadOnes(t *testing.T) {
	t.Parallel()
	rig := newWatchRig(t, batchtest.NewHarness(t, sandbox.Options{}), 0, nil)
	good := batchtest.Payroll(12, "GOOD")
	bad := batchtest.Payroll(6, "BAD")
	bad[3].Amount = "12.345"
	bad[4].Bank = "Bank of Atlantis"
	watchPut(t, rig.path(watch.InboxDir, "good.csv"), watchCSV(good))
	watchPut(t, rig.path(watch.InboxDir, "bad.csv"), watchCSV(bad))
	watchPut(t, rig.path(watch.InboxDir, "empty-rows.csv"), []byte("external_invoice_ref,recipient_reference,bank,third_party_account_no,amount\r\n"))

	worst, err := rig.w.Once(context.Background())
	if err != nil || worst != exitcode.Rejected {
		t.Fatalf("once: exit %d, %v; want 3 (the worst file); logs:\n%s", worst, err, rig.logs)
	}
	if got := rig.listDir(watch.DoneDir); strings.Join(got, ",") != "good.csv" {
		t.Errorf("done holds %v, want good.csv", got)
	}
	wantFailed := "bad.csv,bad.csv.why.txt,empty-rows.csv,empty-rows.csv.why.txt"
	if got := rig.listDir(watch.FailedDir); strings.Join(got, ",") != wantFailed {
		t.Errorf("failed holds %v, want %s", got, wantFailed)
	}
	for _, sub := range []string{watch.InboxDir, watch.ProcessingDir} {
		if got := rig.listDir(sub); len(got) != 0 {
			t.Errorf("%s still holds %v", sub, got)
		}
	}
	rig.assertCreatedOnce(good)
	for _, row := range bad {
		if n := rig.Sandbox.CreateCounts()[row.Ref]; n != 0 {
			t.Errorf("%s of a rejected file was created %d times", row.Ref, n)
		}
	}

	var reports []string
	for _, out := range rig.results() {
		if out.Name == "good.csv" {
			reports = out.Result.Reports
		}
	}
	if len(reports) != 3 {
		t.Fatalf("good.csv reports %v, want CSV, XLSX and HTML", reports)
	}
	for _, p := range reports {
		if filepath.Dir(p) != filepath.Join(rig.root, watch.ReportsDir) {
			t.Errorf("report %s is not in the watched folder's reports", p)
		}
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}

	why := batchtest.ReadFile(t, rig.path(watch.FailedDir, "bad.csv.why.txt"))
	for _, want := range []string{"NOT paid", "2 of its 6 rows were rejected", "line 5, BAD-00004", "amount", "12.345",
		"line 6, BAD-00005", "Bank of Atlantis", "What to do", ".result.csv"} {
		if !strings.Contains(why, want) {
			t.Errorf("bad.csv.why.txt lacks %q:\n%s", want, why)
		}
	}
	if strings.Contains(why, "BAD-00001") {
		t.Errorf("bad.csv.why.txt lists a valid row:\n%s", why)
	}
	if fi, err := os.Stat(rig.path(watch.FailedDir, "bad.csv.why.txt")); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm() != 0o640 {
		t.Errorf("bad.csv.why.txt mode %v, want 0640 in the 0750 failed folder: its group reads it, others never (a rejected row's message may quote its account)", fi.Mode())
	}
	if why := batchtest.ReadFile(t, rig.path(watch.FailedDir, "empty-rows.csv.why.txt")); !strings.Contains(why, "NOT paid") || !strings.Contains(why, "What to do") {
		t.Errorf("empty-rows.csv.why.txt:\n%s", why)
	}
}

func TestWatchDuplicateDropIsNotPaidTwice(t *testing.T) {
	t.Parallel()
	rig := newWatchRig(t, batchtest.NewHarness(t, sandbox.Options{}), 0, nil)
	rows := batchtest.Payroll(8, "TWICE")
	data := watchCSV(rows)
	watchPut(t, rig.path(watch.InboxDir, "payroll.csv"), data)
	if worst, err := rig.w.Once(context.Background()); err != nil || worst != exitcode.OK {
		t.Fatalf("first drop: exit %d, %v", worst, err)
	}
	first := rig.results()[0]
	if first.DuplicateOf != nil || first.Note != "" {
		t.Fatalf("first drop reported as a duplicate: %+v", first)
	}

	// The same bytes again, under the same name and under another.
	watchPut(t, rig.path(watch.InboxDir, "payroll.csv"), data)
	watchPut(t, rig.path(watch.InboxDir, "payroll (1).csv"), data)
	if worst, err := rig.w.Once(context.Background()); err != nil || worst != exitcode.OK {
		t.Fatalf("second drop: exit %d, %v", worst, err)
	}
	rig.assertCreatedOnce(rows)
	outs := rig.results()
	if len(outs) != 3 {
		t.Fatalf("%d outcomes, want 3", len(outs))
	}
	for _, out := range outs[1:] {
		if out.DuplicateOf == nil || out.DuplicateOf.ID != first.Result.RunID {
			t.Errorf("%s: duplicate of %+v, want run %s", out.Name, out.DuplicateOf, first.Result.RunID)
		}
		if out.Result.Skipped != len(rows) || out.Result.Submitted != 0 {
			t.Errorf("%s: %+v, want every row skipped", out.Name, out.Result)
		}
		if filepath.Dir(out.Path) != filepath.Join(rig.root, watch.DoneDir) {
			t.Errorf("%s moved to %s, want done", out.Name, out.Path)
		}
		note := batchtest.ReadFile(t, out.Note)
		for _, want := range []string{"identical", "payroll.csv", first.Result.RunID, "Nothing was sent"} {
			if !strings.Contains(note, want) {
				t.Errorf("%s lacks %q:\n%s", out.Note, want, note)
			}
		}
	}
	done := rig.listDir(watch.DoneDir)
	if len(done) != 5 { // payroll.csv, its timestamped twin, payroll (1).csv, and two notes
		t.Errorf("done holds %v, want the first file, both duplicates and their notes", done)
	}
	if !strings.Contains(rig.logs.String(), "duplicate file") {
		t.Errorf("no warning logged for the duplicate:\n%s", rig.logs)
	}
}

func TestWatchResumesAFileAKilledWatchLeftInProcessing(t *testing.T) {
	t.Parallel()
	h := batchtest.NewHarness(t, sandbox.Options{Faults: sandbox.Faults{LostResponseRate: 0.1}})
	rig := newWatchRig(t, h, 0, nil)
	rows := batchtest.Payroll(60, "RESUME")
	path := rig.path(watch.ProcessingDir, "killed.csv")
	watchPut(t, path, watchCSV(rows))
	later := batchtest.Payroll(3, "LATER")
	watchPut(t, rig.path(watch.InboxDir, "later.csv"), watchCSV(later))

	// The killed watch's run: stopped part-way, as on a signal, with the file in processing.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	half := h.Run(ctx, path, func(c *batch.Config) {
		c.Workers = 2 // few rows in flight, so that the cancel stops it part-way
		c.Progress = func(done, total int) {
			if done >= 20 {
				cancel()
			}
		}
	})
	if half.ExitCode != exitcode.Aborted {
		t.Fatalf("setup run %+v, want it stopped part-way", half)
	}
	if created := len(h.Sandbox.CreateCounts()); created == 0 || created >= len(rows) {
		t.Fatalf("setup run created %d of %d, want part of the file", created, len(rows))
	}

	worst, err := rig.w.Once(context.Background())
	if err != nil || worst != exitcode.OK {
		t.Fatalf("once: exit %d, %v; logs:\n%s", worst, err, rig.logs)
	}
	outs := rig.results()
	if len(outs) != 2 || outs[0].Name != "killed.csv" || outs[1].Name != "later.csv" {
		t.Fatalf("outcomes %+v, want killed.csv resumed before later.csv", outs)
	}
	if outs[0].DuplicateOf != nil {
		t.Errorf("a resumed file reported as a duplicate of %+v", outs[0].DuplicateOf)
	}
	if got := rig.listDir(watch.DoneDir); strings.Join(got, ",") != "killed.csv,later.csv" {
		t.Errorf("done holds %v", got)
	}
	rig.assertCreatedOnce(append(rows, later...))
	h.AssertReport(outs[0].Result, len(rows), batchtest.FileTotal(rows))
}

func TestWatchServiceDownLeavesTheFileInProcessing(t *testing.T) {
	t.Parallel()
	rig := newWatchRig(t, batchtest.NewHarness(t, sandbox.Options{}), 0, nil)
	rows := batchtest.Payroll(4, "DOWN")
	watchPut(t, rig.path(watch.InboxDir, "down.csv"), watchCSV(rows))
	watchPut(t, rig.path(watch.InboxDir, "waiting.csv"), watchCSV(batchtest.Payroll(2, "WAIT")))
	rig.Sandbox.SetDown(true)
	worst, err := rig.w.Once(context.Background())
	if worst != exitcode.Aborted || !errors.Is(err, pool.ErrAborted) {
		t.Fatalf("once with the service down: exit %d, %v; want 1 and ErrAborted", worst, err)
	}
	if got := rig.listDir(watch.ProcessingDir); len(got) != 1 {
		t.Fatalf("processing holds %v, want the file in hand", got)
	}
	if got := rig.listDir(watch.InboxDir); len(got) != 1 {
		t.Errorf("inbox holds %v, want the file not yet started left there", got)
	}
	rig.Sandbox.SetDown(false)
	if worst, err := rig.w.Once(context.Background()); err != nil || worst != exitcode.OK {
		t.Fatalf("once after recovery: exit %d, %v", worst, err)
	}
	if got := rig.listDir(watch.DoneDir); strings.Join(got, ",") != "down.csv,waiting.csv" {
		t.Errorf("done holds %v", got)
	}
	rig.assertCreatedOnce(rows)
}

func TestWatchLoopStopsOnCancel(t *testing.T) {
	t.Parallel()
	rig := newWatchRig(t, batchtest.NewHarness(t, sandbox.Options{}), 0, nil)
	rows := batchtest.Payroll(5, "LOOP")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- rig.w.Loop(ctx) }()
	watchPut(t, rig.path(watch.InboxDir, "loop.csv"), watchCSV(rows))

	select {
	case err := <-stopped:
		t.Fatalf("loop returned before the file: %v", err)
	case <-rig.finished:
	}
	cancel()
	if err := <-stopped; err != nil {
		t.Fatalf("loop after cancel: %v, want nil", err)
	}
	if got := rig.listDir(watch.DoneDir); strings.Join(got, ",") != "loop.csv" {
		t.Errorf("done holds %v", got)
	}
	rig.assertCreatedOnce(rows)
}

func TestWatchFolderIsLocked(t *testing.T) {
	t.Parallel()
	h := batchtest.NewHarness(t, sandbox.Options{})
	rig := newWatchRig(t, h, 0, nil)
	_, err := watch.New(watch.Config{Dir: rig.root, Runner: batch.NewRunner(h.Cfg)})
	if !errors.Is(err, watch.ErrBusy) {
		t.Fatalf("second watcher: %v, want ErrBusy", err)
	}
	if err := rig.w.Close(); err != nil {
		t.Fatal(err)
	}
	w, err := watch.New(watch.Config{Dir: rig.root, Runner: batch.NewRunner(h.Cfg)})
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	w.Close()
}

func TestWatchRefusesDryRun(t *testing.T) {
	t.Parallel()
	h := batchtest.NewHarness(t, sandbox.Options{})
	cfg := h.Cfg
	cfg.DryRun = true
	if _, err := watch.New(watch.Config{Dir: t.TempDir(), Runner: batch.NewRunner(cfg)}); err == nil {
		t.Fatal("a dry-run watcher would move unpaid files to done")
	}
}

// watchLines is rows as CSV lines without a header, as a writer appending to a file adds them.
func watchLines(rows []batchtest.PayrollRow) []byte {
	data := watchCSV(rows)
	return data[bytes.IndexByte(data, '\n')+1:]
}

func TestWatchFileChangedDuringItsRunGoesToFailed(t *testing.T) {
	t.Parallel()
	h := batchtest.NewHarness(t, sandbox.Options{})
	first, appended := batchtest.Payroll(5, "STALL"), batchtest.Payroll(8, "STALL")[5:]
	var appendOnce sync.Once
	var rig *watchRig
	// The writer wakes up after the file was claimed and read: it appends while the run pays.
	h.Cfg.Progress = func(done, total int) {
		appendOnce.Do(func() { watchAppend(t, rig.path(watch.ProcessingDir, "stall.csv"), watchLines(appended)) })
	}
	rig = newWatchRig(t, h, 0, nil)
	watchPut(t, rig.path(watch.InboxDir, "stall.csv"), watchCSV(first))

	if exit := rig.poll(); exit != exitcode.Attention {
		t.Fatalf("poll: exit %d, want 4 (the file needs attention); logs:\n%s", exit, rig.logs)
	}
	if got := rig.listDir(watch.DoneDir); len(got) != 0 {
		t.Errorf("done holds %v: a file whose appended rows were not paid must not look done", got)
	}
	if got := rig.listDir(watch.FailedDir); strings.Join(got, ",") != "stall.csv,stall.csv.why.txt" {
		t.Fatalf("failed holds %v, want stall.csv and its note", got)
	}
	rig.assertCreatedOnce(first)
	for _, row := range appended {
		if n := rig.Sandbox.CreateCounts()[row.Ref]; n != 0 {
			t.Errorf("%s, appended after the run read the file, created %d times", row.Ref, n)
		}
	}
	why := batchtest.ReadFile(t, rig.path(watch.FailedDir, "stall.csv.why.txt"))
	for _, want := range []string{"CHANGED while it was being paid", "NOT read and NOT paid", "COMPLETE file",
		"under the same name", "skipped by its", "external_invoice_ref", ".result.csv", rig.results()[0].Result.RunID} {
		if !strings.Contains(why, want) {
			t.Errorf("note lacks %q:\n%s", want, why)
		}
	}

	// What the note says to do: the complete file, dropped again, pays only the rows still unpaid.
	complete := batchtest.ReadFile(t, rig.path(watch.FailedDir, "stall.csv"))
	watchPut(t, rig.path(watch.InboxDir, "stall.csv"), []byte(complete))
	if exit := rig.poll(); exit != exitcode.OK {
		t.Fatalf("the complete file: exit %d, want 0; logs:\n%s", exit, rig.logs)
	}
	rig.assertCreatedOnce(append(first, appended...))
	if out := rig.results()[1]; out.Result.Skipped != len(first) || out.Result.Submitted != len(appended) {
		t.Errorf("the complete file: %+v, want %d skipped and %d sent", out.Result, len(first), len(appended))
	}
}

func TestWatchEmptyFileGoesToFailedOnceSettled(t *testing.T) {
	t.Parallel()
	const settle = 10 * time.Second
	clock := batchtest.NewClock(time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)) // moved by hand: settling is decided without sleeping
	rig := newWatchRig(t, batchtest.NewHarness(t, sandbox.Options{}), settle, clock.Now)
	watchPut(t, rig.path(watch.InboxDir, "blank.csv"), nil)
	if exit := rig.poll(); exit != exitcode.OK {
		t.Fatalf("first poll: exit %d", exit)
	}
	clock.Advance(settle - time.Second)
	if exit := rig.poll(); exit != exitcode.OK || len(rig.listDir(watch.InboxDir)) != 1 {
		t.Fatalf("before the settle time: exit %d, inbox %v; an empty file may be a copy not yet begun",
			exit, rig.listDir(watch.InboxDir))
	}
	clock.Advance(time.Second)
	if exit := rig.poll(); exit != exitcode.Rejected {
		t.Fatalf("settled: exit %d, want 3; logs:\n%s", exit, rig.logs)
	}
	if got := rig.listDir(watch.FailedDir); strings.Join(got, ",") != "blank.csv,blank.csv.why.txt" {
		t.Fatalf("failed holds %v, want the empty file and its note", got)
	}
	if got := rig.listDir(watch.InboxDir); len(got) != 0 {
		t.Errorf("inbox still holds %v", got)
	}
	if why := batchtest.ReadFile(t, rig.path(watch.FailedDir, "blank.csv.why.txt")); !strings.Contains(why, "the file is empty") ||
		!strings.Contains(why, "What to do") {
		t.Errorf("note:\n%s", why)
	}
	if outs := rig.results(); len(outs) != 1 || outs[0].Exit != exitcode.Rejected || outs[0].Note == "" {
		t.Errorf("outcomes %+v, want the empty file rejected with a note", outs)
	}
}

func TestWatchReportNameHoldsTheTimeOnce(t *testing.T) {
	t.Parallel()
	rig := newWatchRig(t, batchtest.NewHarness(t, sandbox.Options{}), 0, nil)
	for i, prefix := range []string{"FIRST", "SECOND"} {
		watchPut(t, rig.path(watch.InboxDir, "payroll.csv"), watchCSV(batchtest.Payroll(2, prefix)))
		if exit := rig.poll(); exit != exitcode.OK {
			t.Fatalf("drop %d: exit %d; logs:\n%s", i+1, exit, rig.logs)
		}
	}
	outs := rig.results()
	if len(outs) != 2 || outs[1].Name == "payroll.csv" {
		t.Fatalf("outcomes %+v, want the second payroll.csv claimed under a timestamped name", outs)
	}
	for _, out := range outs {
		want := "payroll." + out.Result.RunID + ".result.csv"
		if len(out.Result.Reports) == 0 || filepath.Base(out.Result.Reports[0]) != want {
			t.Errorf("%s: reports %v, want %s: the run id holds the time already", out.Name, out.Result.Reports, want)
		}
	}
}

func TestWatchRegeneratedReportNamedAsTheRunsOwn(t *testing.T) {
	t.Parallel()
	rig := newWatchRig(t, batchtest.NewHarness(t, sandbox.Options{}), 0, nil)
	for _, prefix := range []string{"ONE", "TWO"} {
		watchPut(t, rig.path(watch.InboxDir, "payroll.csv"), watchCSV(batchtest.Payroll(2, prefix)))
		if exit := rig.poll(); exit != exitcode.OK {
			t.Fatalf("exit %d; logs:\n%s", exit, rig.logs)
		}
	}
	second := rig.results()[1].Result
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	run, err := rig.DB.GetRun(context.Background(), second.RunID)
	if err != nil {
		t.Fatal(err)
	}
	again, err := runs.WriteReports(context.Background(), rig.DB, second.RunID, t.TempDir(), watch.ReportName(run.File), now, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := "payroll." + second.RunID + ".regenerated-20261124T100000Z.result.csv"; filepath.Base(again.CSV) != want {
		t.Errorf("regenerated %s, want %s", filepath.Base(again.CSV), want)
	}
}
