package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/pool"
	"github.com/payout/payout/batch/runid"
	"github.com/payout/payout/batch/runs"
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

// watchLockName is the lock file in the watched directory: the ledger lock keeps two processes off
// one ledger, this one keeps two watchers with different ledgers off one folder.
const watchLockName = ".payout-watch.lock"

// whyRowsShown bounds the rows listed in a note: the report has them all.
const whyRowsShown = 20

// ErrBusy is returned by New when another watcher holds the directory.
var ErrBusy = errors.New("another payout watch is using this folder")

// Ledger is what folder mode reads and records beside its runs: earlier runs of a file and their
// rows, the approval policy in force, the close of a run it ended itself, and who accepted a
// file's held repeats.
type Ledger interface {
	ledger.ReportReads
	ApprovalPolicy(ctx context.Context) (ledger.ApprovalPolicy, error)
	FinishRun(ctx context.Context, id string, status ledger.RunStatus, exitCode int, ended time.Time) error
	AppendLedgerEvents(ctx context.Context, events ...ledger.LedgerEvent) (ledger.ChainHead, error)
}

// Config holds what a Watcher needs. Dir and Runner are required.
type Config struct {
	Dir    string
	Runner *batch.Runner
	// Ledger is used to find earlier runs of the same file and the rows of a note; the Runner's
	// ledger when nil.
	Ledger Ledger
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
	// Lead, when set, says whether this watcher leads the inbox, which watchers on other hosts
	// share (on PostgreSQL, ledger.Leader.LeadInbox): a pass pays only while it does; otherwise
	// it returns the process that leads. See lead.go.
	Lead func(ctx context.Context) (bool, ledger.Process, error)
}

// FileOutcome is what became of one file.
type FileOutcome struct {
	Name   string       // its name in processing
	Path   string       // where it is now: done, failed, or still processing
	Exit   int          // the file's exit code, as `watch --once` would exit with it
	Result batch.Result // the run; zero but for File and SHA256 when Err is set
	Err    error        // the run did not finish: unreadable input (Exit 3) or infrastructure (Exit 1)
	Note   string       // the .why.txt or .duplicate.txt written next to it, if any
	// DuplicateOf is the earlier run that paid a byte-identical file, if any.
	DuplicateOf *ledger.Run
}

// Watcher pays the files dropped into Dir/inbox. It is not safe for concurrent use.
type Watcher struct {
	cfg    Config
	runner *batch.Runner
	db     Ledger
	lock   *flock.Flock
	log    *slog.Logger
	seen   map[string]observation // inbox files not yet claimed
	warned map[string]bool        // inbox files already warned about
	tried  map[string]string      // awaiting files' SHA-256: the signatures and policy last tried on them
	lead   leadership
}

// New creates the folders under cfg.Dir if missing (0750) and takes the folder's lock,
// which Close releases. It fails with ErrBusy when another watcher holds the folder. With
// cfg.Lead, the lock is taken once the watcher leads (lead.go).
func New(cfg Config) (*Watcher, error) {
	if cfg.Dir == "" {
		return nil, errors.New("watch: no folder given")
	}
	if cfg.Runner == nil {
		return nil, errors.New("watch: no runner given")
	}
	if cfg.Runner.Config().DryRun {
		return nil, errors.New("watch: a dry run would move unpaid files to done")
	}
	// Whoever dropped a file through the web console is not one of its checkers.
	cfg.Runner = cfg.Runner.WithMakers(Makers(cfg.Dir))
	if db, ok := cfg.Ledger.(*ledger.DB); ok && db == nil {
		cfg.Ledger = nil // a ledger never opened is none
	}
	if cfg.Ledger == nil {
		cfg.Ledger = cfg.Runner.Config().Ledger
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
	for _, sub := range []string{InboxDir, ProcessingDir, DoneDir, FailedDir, AwaitingDir} {
		if err := os.MkdirAll(filepath.Join(cfg.Dir, sub), 0o750); err != nil {
			return nil, fmt.Errorf("watch: create folder: %w", err)
		}
	}
	if err := os.MkdirAll(cfg.ReportDir, 0o750); err != nil {
		return nil, fmt.Errorf("watch: create folder: %w", err)
	}
	lock := flock.New(filepath.Join(cfg.Dir, watchLockName))
	if cfg.Lead == nil {
		if err := lockFolder(lock, cfg.Dir); err != nil {
			return nil, err
		}
	}
	return &Watcher{
		cfg: cfg, runner: cfg.Runner.WithReportDir(cfg.ReportDir), db: cfg.Ledger, lock: lock,
		log: cfg.Logger, seen: make(map[string]observation), warned: make(map[string]bool), tried: make(map[string]string),
	}, nil
}

// lockFolder takes the folder's lock, or says another watcher holds it (ErrBusy).
func lockFolder(lock *flock.Flock, dir string) error {
	locked, err := lock.TryLock()
	if err != nil {
		return fmt.Errorf("watch: lock %s: %w", dir, err)
	}
	if !locked {
		return fmt.Errorf("%w: %s", ErrBusy, dir)
	}
	return nil
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
		if err := pool.Sleep(ctx, pool.WallClock(w.cfg.Now), wait); err != nil {
			return exitcode.Aborted, fmt.Errorf("%w: %w: waiting for files to settle", pool.ErrAborted, err)
		}
		exit, err := w.Poll(ctx)
		worst = exitcode.Worse(worst, exit)
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
	w.lead.loud = true
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

// Poll makes one pass: it resumes the files in processing, pays the files of awaiting-approval
// approved since, then claims and pays each inbox file that has held still for the settle time
// since an earlier poll (or at once with no settle time). With Config.Lead, a pass of a watcher
// that does not lead does nothing. Once and Loop are built on it; tests drive it with an injected clock.
func (w *Watcher) Poll(ctx context.Context) (int, error) {
	worst := exitcode.OK
	if leads, err := w.leads(ctx); !leads || err != nil {
		return worst, err
	}
	// The list is kept current after every pass, whatever the pass ends with.
	defer func() {
		if err := w.writeWaitingList(); err != nil {
			w.log.Warn("could not write the list of files waiting for approval", "file", WaitingList, "err", err)
		}
	}()
	resumed, err := w.processingFiles()
	if err != nil {
		return exitcode.Aborted, err
	}
	for _, name := range resumed {
		w.log.Warn("resuming a file a stopped watch left in processing", "file", name)
		exit, err := w.next(ctx, name)
		worst = exitcode.Worse(worst, exit)
		if err != nil {
			return worst, err
		}
	}
	exit, err := w.recheckAwaiting(ctx)
	worst = exitcode.Worse(worst, exit)
	if err != nil {
		return worst, err
	}
	due, err := w.scanInbox()
	if err != nil {
		return exitcode.Aborted, err
	}
	for i, c := range due {
		if err := ctx.Err(); err != nil {
			return exitcode.Aborted, fmt.Errorf("%w: %w: %d files left in the inbox", pool.ErrAborted, err, len(due)-i)
		}
		name, ok, err := w.claim(c)
		if err != nil {
			return exitcode.Aborted, err
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
		worst = exitcode.Worse(worst, exit)
		if err != nil {
			return worst, err
		}
	}
	return worst, nil
}

// next processes a file in processing unless ctx is over.
func (w *Watcher) next(ctx context.Context, name string) (int, error) {
	if err := ctx.Err(); err != nil {
		return exitcode.Aborted, fmt.Errorf("%w: %w: %s left in processing", pool.ErrAborted, err, name)
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

// ReportName is the name a run's reports are named after, for the run of the file at path: a
// file of a watched folder's processing by the name it had in the inbox, without the timestamp
// that kept it apart from a namesake (the run id holds the time already); any other file by its
// own name. `payout report` names the reports it writes again the same way.
func ReportName(path string) string {
	name := filepath.Base(path)
	if filepath.Base(filepath.Dir(path)) != ProcessingDir {
		return name
	}
	return runs.Unstamped(name)
}

// freeName is name, or name with a timestamp when any of the folders already has one by that name:
// a second payroll.csv must not overwrite the first one's evidence. runs.Unstamped takes the
// timestamp off again.
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
	stem := strings.TrimSuffix(name, ext) + "." + runid.Stamp(w.cfg.Now())
	candidate := stem + ext
	for i := 2; taken(candidate); i++ {
		candidate = fmt.Sprintf("%s-%d%s", stem, i, ext)
	}
	return candidate
}
