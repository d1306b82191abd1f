package batch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/payout/payout/batch/atomicfile"
	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/ledger"
)

// Defaults of folder mode.
const (
	DefaultSettle   = 10 * time.Second
	DefaultInterval = 10 * time.Second
)

// The folders of a watched directory.
const (
	InboxDir      = "inbox"
	ProcessingDir = "processing"
	DoneDir       = "done"
	FailedDir     = "failed"
	ReportsDir    = "reports"
)

// Suffixes of the notes written next to a file in done or failed.
const (
	WhySuffix       = ".why.txt"
	DuplicateSuffix = ".duplicate.txt"
)

// noteMode is the notes' mode: a rejected row's message may quote its account number.
const noteMode = 0o600

// watchLockName is the lock file in the watched directory: the ledger lock keeps two processes off
// one ledger, this one keeps two watchers with different ledgers off one folder.
const watchLockName = ".payout-watch.lock"

// whyRowsShown bounds the rows listed in a note: the report has them all.
const whyRowsShown = 20

// ErrWatchBusy is returned by NewWatcher when another watcher holds the directory.
var ErrWatchBusy = errors.New("another payout watch is using this folder")

// WatchConfig holds what a Watcher needs. Dir and Runner are required.
type WatchConfig struct {
	Dir    string
	Runner *Runner
	// Ledger is used to find earlier runs of the same file and the rows of a note; the Runner's
	// ledger when nil.
	Ledger *ledger.DB
	// Settle is how long a file's size and modification time must stay unchanged before it is claimed.
	Settle time.Duration
	// Interval is the time between polls of Loop.
	Interval time.Duration
	// ReportDir overrides Dir/reports.
	ReportDir string
	Now       func() time.Time
	Logger    *slog.Logger
	// Done, when set, is called after each file with what became of it.
	Done func(FileOutcome)
}

// FileOutcome is what became of one file.
type FileOutcome struct {
	Name   string // its name in processing
	Path   string // where it is now: done, failed, or still processing
	Exit   int    // the file's exit code, as `watch --once` would exit with it
	Result Result // the run; zero but for File and SHA256 when Err is set
	Err    error  // the run did not finish: unreadable input (Exit 3) or infrastructure (Exit 1)
	Note   string // the .why.txt or .duplicate.txt written next to it, if any
	// DuplicateOf is the earlier run that paid a byte-identical file, if any.
	DuplicateOf *ledger.Run
}

// Watcher pays the files dropped into Dir/inbox. It is not safe for concurrent use.
type Watcher struct {
	cfg    WatchConfig
	runner *Runner
	db     *ledger.DB
	lock   *flock.Flock
	log    *slog.Logger
	seen   map[string]observation // inbox files not yet claimed
	warned map[string]bool        // inbox files already warned about
}

// observation is an inbox file as last seen. since is when it was first seen with this size and time.
type observation struct {
	size  int64
	mod   time.Time
	since time.Time
}

// NewWatcher creates the folders under cfg.Dir if missing (0750) and takes the folder's lock,
// which Close releases. It fails with ErrWatchBusy when another watcher holds the folder.
func NewWatcher(cfg WatchConfig) (*Watcher, error) {
	if cfg.Dir == "" {
		return nil, errors.New("watch: no folder given")
	}
	if cfg.Runner == nil {
		return nil, errors.New("watch: no runner given")
	}
	if cfg.Runner.cfg.DryRun {
		return nil, errors.New("watch: a dry run would move unpaid files to done")
	}
	if cfg.Ledger == nil {
		cfg.Ledger = cfg.Runner.cfg.Ledger
	}
	if cfg.Ledger == nil {
		return nil, errors.New("watch: no ledger given")
	}
	if cfg.Settle < 0 {
		cfg.Settle = 0
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.ReportDir == "" {
		cfg.ReportDir = filepath.Join(cfg.Dir, ReportsDir)
	}
	for _, sub := range []string{InboxDir, ProcessingDir, DoneDir, FailedDir} {
		if err := os.MkdirAll(filepath.Join(cfg.Dir, sub), 0o750); err != nil {
			return nil, fmt.Errorf("watch: create folder: %w", err)
		}
	}
	if err := os.MkdirAll(cfg.ReportDir, 0o750); err != nil {
		return nil, fmt.Errorf("watch: create folder: %w", err)
	}
	lock := flock.New(filepath.Join(cfg.Dir, watchLockName))
	locked, err := lock.TryLock()
	if err != nil {
		return nil, fmt.Errorf("watch: lock %s: %w", cfg.Dir, err)
	}
	if !locked {
		return nil, fmt.Errorf("%w: %s", ErrWatchBusy, cfg.Dir)
	}
	return &Watcher{
		cfg: cfg, runner: cfg.Runner.WithReportDir(cfg.ReportDir), db: cfg.Ledger, lock: lock,
		log: cfg.Logger, seen: make(map[string]observation), warned: make(map[string]bool),
	}, nil
}

// WithReportDir returns a Runner like r that writes its reports to dir.
func (r *Runner) WithReportDir(dir string) *Runner {
	cfg := r.cfg
	cfg.ReportDir = dir
	return &Runner{cfg: cfg, reportName: r.reportName}
}

// withReportName returns a Runner like r that names its reports after name, not the file's own.
func (r *Runner) withReportName(name string) *Runner {
	return &Runner{cfg: r.cfg, reportName: name}
}

// Close releases the folder's lock.
func (w *Watcher) Close() error {
	return w.lock.Unlock()
}

// Once processes what is there, for cron: first what a stopped watcher left in processing, then
// every inbox file that holds still for the settle time (it waits for that), and returns the
// worst exit code. Files still changing are left for the next start. It stops at the first file
// that aborts (exit 1), leaving that file in processing, and returns an error saying why.
func (w *Watcher) Once(ctx context.Context) (int, error) {
	worst, err := w.Poll(ctx)
	if err != nil {
		return worst, err
	}
	if wait, pending := w.settleWait(); pending {
		if err := sleepCtx(ctx, wait); err != nil {
			return ExitAborted, fmt.Errorf("%w: %w: waiting for files to settle", ErrAborted, err)
		}
		exit, err := w.Poll(ctx)
		worst = WorseExit(worst, exit)
		if err != nil {
			return worst, err
		}
		for name := range w.seen {
			w.log.Info("file still changing: left in the inbox for the next run", "file", name)
		}
	}
	return worst, nil
}

// Loop polls every Interval until ctx is cancelled, and then returns nil: a file stopped part-way
// stays in processing and is resumed first at the next start. A file that aborts for another
// reason (service down, ledger error) stops the loop with that error.
func (w *Watcher) Loop(ctx context.Context) error {
	ticker := time.NewTicker(w.cfg.Interval)
	defer ticker.Stop()
	for {
		_, err := w.Poll(ctx)
		if ctx.Err() != nil {
			if err != nil {
				w.log.Warn("watch stopped", "err", err)
			}
			return nil
		}
		if err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// Poll makes one pass: it resumes the files in processing, then claims and pays each inbox file
// that has held still for the settle time since an earlier poll (or at once with no settle time).
// Once and Loop are built on it; tests drive it with an injected clock.
func (w *Watcher) Poll(ctx context.Context) (int, error) {
	worst := ExitOK
	resumed, err := w.processingFiles()
	if err != nil {
		return ExitAborted, err
	}
	for _, name := range resumed {
		w.log.Warn("resuming a file a stopped watch left in processing", "file", name)
		exit, err := w.next(ctx, name)
		worst = WorseExit(worst, exit)
		if err != nil {
			return worst, err
		}
	}
	due, err := w.scanInbox()
	if err != nil {
		return ExitAborted, err
	}
	for i, c := range due {
		if err := ctx.Err(); err != nil {
			return ExitAborted, fmt.Errorf("%w: %w: %d files left in the inbox", ErrAborted, err, len(due)-i)
		}
		name, ok, err := w.claim(c)
		if err != nil {
			return ExitAborted, err
		}
		if !ok {
			continue
		}
		var exit int
		if c.obs.size == 0 {
			// Held still and empty for the settle time: a copy that has not started would have
			// written by now, and a file left in the inbox without a word helps nobody.
			exit, err = w.failEmpty(name)
		} else {
			exit, err = w.process(ctx, name)
		}
		worst = WorseExit(worst, exit)
		if err != nil {
			return worst, err
		}
	}
	return worst, nil
}

// next processes a file in processing unless ctx is over.
func (w *Watcher) next(ctx context.Context, name string) (int, error) {
	if err := ctx.Err(); err != nil {
		return ExitAborted, fmt.Errorf("%w: %w: %s left in processing", ErrAborted, err, name)
	}
	return w.process(ctx, name)
}

func (w *Watcher) dir(sub string) string { return filepath.Join(w.cfg.Dir, sub) }

// processingFiles lists what a stopped watcher left behind, by name.
func (w *Watcher) processingFiles() ([]string, error) {
	entries, err := os.ReadDir(w.dir(ProcessingDir))
	if err != nil {
		return nil, fmt.Errorf("watch: read processing: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// partialName reports names that editors, browsers and copy tools give files they are still
// writing, or keep beside an open one. They are never claimed, and not worth a warning.
func partialName(name string) bool {
	lower := strings.ToLower(name)
	if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "~$") {
		return true
	}
	for _, suffix := range []string{".tmp", ".part", ".crdownload", ".swp", ".partial", ".download", "~"} {
		if strings.HasSuffix(lower, suffix) {
			return true
		}
	}
	return false
}

func payableName(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".csv" || ext == ".xlsx"
}

type candidate struct {
	name string
	obs  observation
}

// scanInbox records what it sees and returns the files that have held still for the settle time,
// oldest first.
func (w *Watcher) scanInbox() ([]candidate, error) {
	entries, err := os.ReadDir(w.dir(InboxDir))
	if err != nil {
		return nil, fmt.Errorf("watch: read inbox: %w", err)
	}
	now := w.cfg.Now()
	present := make(map[string]bool, len(entries))
	var due []candidate
	for _, e := range entries {
		name := e.Name()
		if partialName(name) {
			continue
		}
		present[name] = true
		if !e.Type().IsRegular() {
			w.warnOnce(name, "not a regular file: left in the inbox")
			continue
		}
		if !payableName(name) {
			w.warnOnce(name, "not a .csv or .xlsx file: left in the inbox; save it as CSV or XLSX to have it paid")
			continue
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("watch: inbox: %w", err)
		}
		obs, ok := w.seen[name]
		if !ok || obs.size != info.Size() || !obs.mod.Equal(info.ModTime()) {
			obs = observation{size: info.Size(), mod: info.ModTime(), since: now}
			w.seen[name] = obs
		}
		if now.Sub(obs.since) >= w.settleFor(obs) {
			due = append(due, candidate{name: name, obs: obs})
		}
	}
	for name := range w.seen {
		if !present[name] {
			delete(w.seen, name)
		}
	}
	for name := range w.warned {
		if !present[name] {
			delete(w.warned, name)
		}
	}
	sort.Slice(due, func(i, j int) bool {
		if !due[i].obs.mod.Equal(due[j].obs.mod) {
			return due[i].obs.mod.Before(due[j].obs.mod)
		}
		return due[i].name < due[j].name
	})
	return due, nil
}

func (w *Watcher) warnOnce(name, msg string) {
	if !w.warned[name] {
		w.warned[name] = true
		w.log.Warn(msg, "file", name)
	}
}

// settleWait is how long until the first file seen but not yet settled may be claimed.
func (w *Watcher) settleWait() (time.Duration, bool) {
	if len(w.seen) == 0 {
		return 0, false
	}
	var first time.Time
	for _, obs := range w.seen {
		if due := obs.since.Add(w.settleFor(obs)); first.IsZero() || due.Before(first) {
			first = due
		}
	}
	return first.Sub(w.cfg.Now()), true
}

// settleFor is how long a file must hold still before it is claimed. An empty one waits at least
// DefaultSettle even when the settle time is shorter: copy tools create a file before they write
// it, and an empty file is failed, not paid.
func (w *Watcher) settleFor(obs observation) time.Duration {
	if obs.size == 0 && w.cfg.Settle < DefaultSettle {
		return DefaultSettle
	}
	return w.cfg.Settle
}

// claim moves a settled file into processing, unless it changed since it was seen. A rename within
// one file system is atomic: the file is in exactly one folder at any moment.
func (w *Watcher) claim(c candidate) (string, bool, error) {
	src := filepath.Join(w.dir(InboxDir), c.name)
	info, err := os.Lstat(src)
	if errors.Is(err, fs.ErrNotExist) {
		delete(w.seen, c.name)
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("watch: inbox: %w", err)
	}
	if info.Size() != c.obs.size || !info.ModTime().Equal(c.obs.mod) {
		w.seen[c.name] = observation{size: info.Size(), mod: info.ModTime(), since: w.cfg.Now()}
		return "", false, nil
	}
	target := w.freeName(c.name, ProcessingDir, DoneDir, FailedDir)
	if err := os.Rename(src, filepath.Join(w.dir(ProcessingDir), target)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			delete(w.seen, c.name)
			return "", false, nil
		}
		return "", false, fmt.Errorf("watch: claim %s: %w", c.name, err)
	}
	delete(w.seen, c.name)
	w.log.Info("file claimed", "file", c.name, "as", target, "bytes", c.obs.size)
	return target, true, nil
}

// stampPattern is the timestamp freeName puts before a name's extension.
var stampPattern = regexp.MustCompile(`\.\d{8}T\d{6}Z(-\d+)?$`)

// inboxName is the name a file of processing had in the inbox, without freeName's timestamp: a
// report is named after it and its run id, which holds the time already.
func inboxName(name string) string {
	ext := filepath.Ext(name)
	return stampPattern.ReplaceAllString(strings.TrimSuffix(name, ext), "") + ext
}

// freeName is name, or name with a timestamp when any of the folders already has one by that name:
// a second payroll.csv must not overwrite the first one's evidence.
func (w *Watcher) freeName(name string, subs ...string) string {
	taken := func(candidate string) bool {
		for _, sub := range subs {
			if _, err := os.Lstat(filepath.Join(w.dir(sub), candidate)); err == nil {
				return true
			}
		}
		return false
	}
	if !taken(name) {
		return name
	}
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext) + "." + w.cfg.Now().UTC().Format("20060102T150405Z")
	candidate := stem + ext
	for i := 2; taken(candidate); i++ {
		candidate = fmt.Sprintf("%s-%d%s", stem, i, ext)
	}
	return candidate
}

// process runs one file of processing and moves it where its outcome says.
func (w *Watcher) process(ctx context.Context, name string) (int, error) {
	path := filepath.Join(w.dir(ProcessingDir), name)
	log := w.log.With("file", name)
	out := FileOutcome{Name: name, Path: path}
	defer func() {
		if w.cfg.Done != nil {
			w.cfg.Done(out)
		}
	}()
	bg := context.WithoutCancel(ctx)

	claimed, err := takeFingerprint(path)
	if err != nil {
		out.Exit, out.Err = ExitAborted, err
		return out.Exit, &abortError{file: name, cause: err}
	}
	earlier, err := w.paidEarlier(ctx, claimed.sha256)
	if err != nil {
		out.Exit, out.Err = ExitAborted, err
		return out.Exit, &abortError{file: name, cause: err}
	}
	res, err := w.runner.withReportName(inboxName(name)).Run(ctx, path)
	out.Result = res
	if err != nil {
		out.Err = err
		out.Exit = ErrorExit(err)
		if out.Exit == ExitRejected {
			return w.fail(log, &out, unreadableNote(name, err))
		}
		// Infrastructure: the file stays in processing and the next start resumes it.
		log.Warn("file left in processing: it is resumed at the next start", "err", err)
		return out.Exit, &abortError{file: name, cause: err}
	}
	out.Exit = res.ExitCode
	if res.ExitCode != ExitAborted {
		if changed, exit, err := w.failIfChanged(log, &out, claimed); changed || err != nil {
			return exit, err
		}
	}
	switch res.ExitCode {
	case ExitOK:
		dest, err := w.moveTo(name, DoneDir)
		if err != nil {
			return ExitAborted, err
		}
		out.Path = dest
		if note := duplicateNote(name, res, earlier); note != "" {
			out.DuplicateOf = earlier
			out.Note = dest + DuplicateSuffix
			if err := atomicfile.WriteBytes(out.Note, noteMode, []byte(note)); err != nil {
				return ExitAborted, fmt.Errorf("watch: write note: %w", err)
			}
			args := []any{"run", res.RunID, "skipped", res.Skipped, "note", out.Note}
			if earlier != nil {
				args = append(args, "same_as", filepath.Base(earlier.File), "paid_in_run", earlier.ID)
			}
			log.Warn("duplicate file: every row was paid before; nothing was sent", args...)
			return ExitOK, nil
		}
		log.Info("file paid", "run", res.RunID, "rows", res.Rows, "moved_to", dest)
		return ExitOK, nil
	case ExitRejected, ExitAttention:
		rows, _, err := ReportRows(bg, w.db, res.RunID, res.ExitCode == ExitRejected)
		if err != nil {
			return ExitAborted, &abortError{file: name, cause: fmt.Errorf("read the run back: %w", err)}
		}
		return w.fail(log, &out, resultNote(name, res, rows))
	}
	// Aborted: whatever was done is in the ledger, the rest is resumed at the next start.
	log.Warn("file left in processing: it is resumed at the next start", "run", res.RunID, "reason", res.Aborted)
	return ExitAborted, &abortError{file: name, reason: res.Aborted}
}

// fingerprint is what a file was when it was claimed, to tell after its run whether a writer
// changed it meanwhile: rows added after the run read the file were never paid.
type fingerprint struct {
	size   int64
	mod    time.Time
	sha256 string
}

func takeFingerprint(path string) (fingerprint, error) {
	info, err := os.Stat(path)
	if err != nil {
		return fingerprint{}, fmt.Errorf("watch: %w", err)
	}
	sum, err := fileSHA256(path)
	if err != nil {
		return fingerprint{}, err
	}
	return fingerprint{size: info.Size(), mod: info.ModTime(), sha256: sum}, nil
}

func (f fingerprint) same(g fingerprint) bool {
	return f.size == g.size && f.mod.Equal(g.mod) && f.sha256 == g.sha256
}

// failIfChanged moves a file that changed during its run to failed, with a note, and reports
// whether it did. Such a file must not go to done: what was written after the run read it was
// not paid, and nobody would look at it again.
func (w *Watcher) failIfChanged(log *slog.Logger, out *FileOutcome, claimed fingerprint) (bool, int, error) {
	now, err := takeFingerprint(out.Path)
	if err != nil {
		return false, ExitAborted, &abortError{file: out.Name, cause: fmt.Errorf("check the file after its run: %w", err)}
	}
	if now.same(claimed) {
		return false, 0, nil
	}
	log.Warn("file changed while it was being paid: rows written after the run read it were not paid",
		"run", out.Result.RunID, "claimed_bytes", claimed.size, "now_bytes", now.size)
	out.Exit = WorseExit(out.Result.ExitCode, ExitAttention)
	exit, err := w.fail(log, out, changedNote(out.Name, out.Result, claimed, now))
	return true, exit, err
}

// abortError is a file left in processing. It unwraps to ErrAborted and to its cause.
type abortError struct {
	file   string
	reason string // when there is no cause: the runner's Result.Aborted
	cause  error
}

func (e *abortError) Error() string {
	reason := e.reason
	if e.cause != nil {
		reason = e.cause.Error()
	}
	return e.file + ": " + reason + " (left in processing: the next start resumes it)"
}

func (e *abortError) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrAborted}
	}
	return []error{ErrAborted, e.cause}
}

// failEmpty moves an empty file from processing to failed, with a note.
func (w *Watcher) failEmpty(name string) (int, error) {
	path := filepath.Join(w.dir(ProcessingDir), name)
	out := FileOutcome{Name: name, Path: path, Exit: ExitRejected,
		Err: &read.InputError{Path: path, Err: errors.New("the file is empty")}}
	defer func() {
		if w.cfg.Done != nil {
			w.cfg.Done(out)
		}
	}()
	note := fmt.Sprintf("%s was NOT paid: the file is empty (0 bytes), and it stayed empty for the settle time (%s).\n\n"+
		"What to do:\n  If it was still being copied, the copy may have gone on here: drop the complete file into the\n"+
		"  inbox again. Otherwise save the payout file again (CSV or XLSX, with its header row) and drop it in.\n",
		name, w.settleFor(observation{}))
	return w.fail(w.log.With("file", name), &out, note)
}

// fail moves a file to failed with its note.
func (w *Watcher) fail(log *slog.Logger, out *FileOutcome, note string) (int, error) {
	dest, err := w.moveTo(out.Name, FailedDir)
	if err != nil {
		return ExitAborted, err
	}
	out.Path, out.Note = dest, dest+WhySuffix
	if err := atomicfile.WriteBytes(out.Note, noteMode, []byte(note)); err != nil {
		return ExitAborted, fmt.Errorf("watch: write note: %w", err)
	}
	args := []any{"exit", out.Exit, "note", out.Note}
	if out.Err == nil {
		args = append(args, "run", out.Result.RunID)
	}
	log.Warn("file moved to failed: see the note beside it", args...)
	return out.Exit, nil
}

func (w *Watcher) moveTo(name, sub string) (string, error) {
	dest := filepath.Join(w.dir(sub), w.freeName(name, sub))
	if err := os.Rename(filepath.Join(w.dir(ProcessingDir), name), dest); err != nil {
		return "", fmt.Errorf("watch: move %s to %s: %w", name, sub, err)
	}
	return dest, nil
}

// paidEarlier finds the run that paid a byte-identical file: among finished runs of the same SHA-256
// that needed nothing (exit 0), the first that sent something; a later drop of the same file is
// such a run too, but sent nothing.
func (w *Watcher) paidEarlier(ctx context.Context, sum string) (*ledger.Run, error) {
	runs, err := w.db.Runs(ctx)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	var same []ledger.Run
	for _, r := range runs {
		if r.FileSHA256 == sum && r.Kind == "run" && r.Status == "finished" && r.ExitCode == ExitOK {
			same = append(same, r)
		}
	}
	if len(same) == 0 {
		return nil, nil
	}
	sort.SliceStable(same, func(i, j int) bool { return same[i].StartedAt.Before(same[j].StartedAt) })
	for i := range same {
		lines, err := w.db.RunReport(ctx, same[i].ID)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", same[i].ID, err)
		}
		for _, l := range lines {
			if !l.Row.Rejected && !l.Row.Skipped {
				return &same[i], nil
			}
		}
	}
	return &same[0], nil
}

// duplicateNote says why a file that sent nothing new was not paid twice; empty when it did send.
func duplicateNote(name string, res Result, earlier *ledger.Run) string {
	allSkipped := res.Rows > 0 && res.Skipped == res.Rows && res.Submitted == 0
	if earlier == nil && !allSkipped {
		return ""
	}
	var b strings.Builder
	if earlier != nil {
		fmt.Fprintf(&b, "%s is identical (SHA-256 %s) to %s, paid in run %s on %s.\n",
			name, res.SHA256, filepath.Base(earlier.File), earlier.ID, earlier.StartedAt.UTC().Format("2006-01-02 15:04 MST"))
	} else {
		fmt.Fprintf(&b, "Every row of %s was accepted by the service in earlier runs.\n", name)
	}
	if res.Submitted == 0 {
		fmt.Fprintf(&b, "Nothing was sent: the ledger skipped all %d rows (run %s).\n", res.Skipped, res.RunID)
	} else {
		fmt.Fprintf(&b, "%d rows that earlier runs had not finished were sent in run %s; %d were skipped.\n",
			res.Submitted, res.RunID, res.Skipped)
	}
	b.WriteString("\nIf these are new payments, give every row a new external_invoice_ref and drop the file again.\n")
	writeReports(&b, res.Reports)
	return b.String()
}

// resultNote explains a file that was rejected (3) or needs attention (4), row by row.
func resultNote(name string, res Result, rows []report.Row) string {
	var b strings.Builder
	var listed []report.Row
	if res.ExitCode == ExitRejected {
		fmt.Fprintf(&b, "%s was NOT paid: %d of its %d rows were rejected, so nothing in it was sent\n", name, res.Rejected, res.Rows)
		b.WriteString("(a file is paid all or nothing).\n\nRejected rows (line, reference: column, reason, value):\n")
		for _, row := range rows {
			if ledger.State(row.State) == ledger.Rejected {
				listed = append(listed, row)
			}
		}
	} else {
		fmt.Fprintf(&b, "%s was processed, but %d of its %d rows need attention: failed %d, outcome unknown %d, not sent %d, rejected %d.\n",
			name, res.Rows-res.Succeeded-res.Pending, res.Rows, res.Failed, res.Unknown, res.NotSent, res.Rejected)
		fmt.Fprintf(&b, "%d rows were accepted by the service (%d of them in earlier runs).\n", res.Succeeded+res.Pending, res.Skipped)
		if res.SkippedOtherFile > 0 {
			fmt.Fprintf(&b, "%d rows were not sent because ANOTHER file paid them: is this last period's file, or are its references reused?\n", res.SkippedOtherFile)
		}
		b.WriteString("\nRows that need attention:\n")
		for _, row := range rows {
			switch ledger.State(row.State) {
			case ledger.Succeeded, ledger.Submitted:
				if strings.HasPrefix(row.Message, paidElsewherePrefix) {
					listed = append(listed, row)
				}
			default:
				listed = append(listed, row)
			}
		}
	}
	for i, row := range listed {
		if i == whyRowsShown {
			fmt.Fprintf(&b, "  ... and %d more: see the report.\n", len(listed)-whyRowsShown)
			break
		}
		fmt.Fprintf(&b, "  line %d, %s: %s %s\n", row.Line, row.Ref, row.State, row.Message)
	}
	b.WriteString("\nWhat to do:\n")
	if res.ExitCode == ExitRejected {
		b.WriteString("  Correct the rows above in your copy of the file, keep the other rows as they are, and drop the\n" +
			"  corrected file into the inbox again. Nothing of this file was paid, so every row will be paid once.\n")
	} else {
		b.WriteString("  UNKNOWN rows may have been paid: run `payout reconcile` before anything else.\n")
		if failuresConfirmed(rows) {
			b.WriteString("  FAILED rows were refused by the service and are never sent again under the same reference:\n" +
				"  pay them in a new file with new external_invoice_ref values.\n")
		} else {
			b.WriteString("  FAILED rows without \"" + RefusalConfirmed + "\" may exist at the service:\n" +
				"  run `payout reconcile` first, and pay again only the rows it leaves FAILED with that note.\n")
		}
		b.WriteString("  Dropping this same file in again is safe: accepted rows are skipped, rows not sent are sent,\n" +
			"  and unknown ones are looked up before anything is sent.\n")
	}
	writeReports(&b, res.Reports)
	return b.String()
}

// changedNote explains a file that a writer changed while it was being paid.
func changedNote(name string, res Result, claimed, now fingerprint) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s CHANGED while it was being paid, so it was moved here and not to done.\n", name)
	fmt.Fprintf(&b, "  when claimed: %d bytes, modified %s, SHA-256 %s\n", claimed.size,
		claimed.mod.UTC().Format(time.RFC3339), claimed.sha256)
	fmt.Fprintf(&b, "  after the run: %d bytes, modified %s, SHA-256 %s\n\n", now.size,
		now.mod.UTC().Format(time.RFC3339), now.sha256)
	if res.ExitCode == ExitRejected {
		fmt.Fprintf(&b, "Run %s sent nothing: %d of the %d rows it read were rejected (a file is paid all or nothing).\n",
			res.RunID, res.Rejected, res.Rows)
	} else {
		fmt.Fprintf(&b, "Run %s paid the %d rows it read when it started: %d accepted by the service (%d of them in earlier\n"+
			"runs), failed %d, outcome unknown %d, not sent %d, rejected %d. The report lists each of those rows.\n",
			res.RunID, res.Rows, res.Succeeded+res.Pending, res.Skipped, res.Failed, res.Unknown, res.NotSent, res.Rejected)
	}
	b.WriteString("Anything written into the file after the run read it was NOT read and NOT paid.\n")
	b.WriteString("\nWhat to do:\n" +
		"  Wait until whatever writes the file has finished, then drop the COMPLETE file into the inbox again\n" +
		"  under the same name. That is safe: every row the service already accepted is skipped by its\n" +
		"  external_invoice_ref, and only the rows not yet paid are sent. (Under another name, the rows this\n" +
		"  run paid count as paid by another file, and the run asks for attention.)\n" +
		"  To stop this happening, have the writer save under a temporary name (.tmp or .part) and rename\n" +
		"  the file when it is done, or raise --settle above the writer's longest pause.\n")
	if res.Unknown > 0 {
		b.WriteString("  Some rows have an unknown outcome: run `payout reconcile` first.\n")
	}
	writeReports(&b, res.Reports)
	return b.String()
}

// unreadableNote explains a file the reader refused as a whole.
func unreadableNote(name string, err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s was NOT paid: it could not be read as a payout file, so nothing in it was sent.\n\n", name)
	var fileErr *FileError
	if errors.As(err, &fileErr) && len(fileErr.Errs) > 0 {
		for i, e := range fileErr.Errs {
			if i == whyRowsShown {
				fmt.Fprintf(&b, "  ... and %d more\n", len(fileErr.Errs)-whyRowsShown)
				break
			}
			fmt.Fprintf(&b, "  %s\n", e.Error())
		}
	} else {
		fmt.Fprintf(&b, "  %s\n", err.Error())
	}
	b.WriteString("\nWhat to do:\n  Save it as CSV (UTF-8) or XLSX with a header row: external_invoice_ref, recipient_reference,\n" +
		"  bank or payout_service_id, third_party_account_no, amount, payment_description (`payout template`\n" +
		"  writes an empty one), fix what is named above, and drop it into the inbox again.\n")
	return b.String()
}

func writeReports(b *strings.Builder, reports []string) {
	if len(reports) == 0 {
		return
	}
	b.WriteString("\nReports:\n")
	for _, p := range reports {
		fmt.Fprintf(b, "  %s\n", p)
	}
}
