package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/pool"
	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/runs"
	"github.com/payout/payout/ledger"
)

// process runs one file of processing and moves it where its outcome says.
func (w *Watcher) process(ctx context.Context, name string) (int, error) {
	path := filepath.Join(w.dir(ProcessingDir), name)
	log := w.log.With("file", name)
	out := FileOutcome{Name: name, Path: path}
	defer func() {
		w.shareWithFolder(append(out.Result.Reports, out.Result.RetryFile)...)
		if w.cfg.Done != nil {
			w.cfg.Done(out)
		}
	}()
	bg := context.WithoutCancel(ctx)

	claimed, err := takeFingerprint(path)
	if err != nil {
		out.Exit, out.Err = exitcode.Aborted, err
		return out.Exit, &abortError{file: name, cause: err}
	}
	earlier, err := w.paidEarlier(ctx, claimed.sha256)
	if err != nil {
		out.Exit, out.Err = exitcode.Aborted, err
		return out.Exit, &abortError{file: name, cause: err}
	}
	runner, accepted, err := w.runnerFor(ctx, log, path, claimed.sha256)
	if err != nil {
		// Whatever stops the plan stops the run too, which says it better.
		log.Warn("could not check the acceptance of this file's repeats: they stay held", "err", err)
		runner = w.runner.WithReportName(runs.Unstamped(name))
	}
	if accepted.Need > 0 && accepted.Missing() == "" {
		defer w.recordAcceptance(log, &out, accepted)
	}
	res, err := runner.Run(ctx, path)
	out.Result = res
	if err != nil {
		out.Err = err
		out.Exit = exitcode.OfError(err)
		if out.Exit == exitcode.Rejected {
			return w.failRefused(log, &out, unreadableNote(name, err))
		}
		// Infrastructure: the file stays in processing and the next start resumes it.
		log.Warn("file left in processing: it is resumed at the next start", "err", err)
		return out.Exit, &abortError{file: name, cause: err}
	}
	out.Exit = res.ExitCode
	if res.ExitCode == exitcode.AwaitingApproval {
		return w.await(ctx, log, &out)
	}
	// A file changed under its run goes to failed even when the run stopped for it: resuming
	// would pay rows nobody validated with the rest.
	if changed, exit, err := w.failIfChanged(ctx, log, &out, claimed); changed || err != nil {
		return exit, err
	}
	switch res.ExitCode {
	case exitcode.OK:
		return w.paid(log, &out, earlier)
	case exitcode.Rejected, exitcode.Attention:
		rows, err := runs.ReportRows(bg, w.db, res.RunID, res.ExitCode == exitcode.Rejected)
		if err != nil {
			return exitcode.Aborted, &abortError{file: name, cause: fmt.Errorf("read the run back: %w", err)}
		}
		if res.ExitCode == exitcode.Rejected && onlyRepeatsHeld(rows) {
			return w.awaitRepeats(ctx, log, &out, rows, accepted)
		}
		return w.fail(log, &out, resultNote(name, res, rows))
	}
	// Aborted: whatever was done is in the ledger, the rest is resumed at the next start.
	log.Warn("file left in processing: it is resumed at the next start", "run", res.RunID, "reason", res.Aborted)
	return exitcode.Aborted, &abortError{file: name, reason: res.Aborted}
}

// paid moves a file paid to done, with a note when every row of it was paid before.
func (w *Watcher) paid(log *slog.Logger, out *FileOutcome, earlier *ledger.Run) (int, error) {
	name, res := out.Name, out.Result
	dest, err := w.moveTo(name, DoneDir)
	if err != nil {
		return exitcode.Aborted, err
	}
	out.Path = dest
	if note := duplicateNote(name, res, earlier, w.runner.Config().Zone); note != "" {
		out.DuplicateOf = earlier
		out.Note = dest + DuplicateSuffix
		if err := writeNote(out.Note, note); err != nil {
			return exitcode.Aborted, fmt.Errorf("watch: write note: %w", err)
		}
		args := []any{"run", res.RunID, "skipped", res.Skipped, "note", out.Note}
		if earlier != nil {
			args = append(args, "same_as", filepath.Base(earlier.File), "paid_in_run", earlier.ID)
		}
		log.Warn("duplicate file: every row was paid before; nothing was sent", args...)
		return exitcode.OK, nil
	}
	log.Info("file paid", "run", res.RunID, "rows", res.Rows, "moved_to", dest)
	return exitcode.OK, nil
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
	sum, err := read.FileSHA256(path)
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
func (w *Watcher) failIfChanged(ctx context.Context, log *slog.Logger, out *FileOutcome, claimed fingerprint) (bool, int, error) {
	now, err := takeFingerprint(out.Path)
	if err != nil {
		return false, exitcode.Aborted, &abortError{file: out.Name, cause: fmt.Errorf("check the file after its run: %w", err)}
	}
	if now.same(claimed) {
		return false, 0, nil
	}
	log.Warn("file changed while it was being paid: rows written after the run read it were not paid",
		"run", out.Result.RunID, "claimed_bytes", claimed.size, "now_bytes", now.size)
	out.Exit = exitcode.Worse(out.Result.ExitCode, exitcode.Attention)
	// The ledger keeps the file's outcome, not the run's: a run that ended with everything it
	// read accepted would make the complete file, dropped again under its name, look like another
	// file paying rows this one already paid.
	if err := w.cfg.Ledger.FinishRun(ctx, out.Result.RunID, ledger.RunFinished, out.Exit, out.Result.EndedAt); err != nil {
		return false, exitcode.Aborted, &abortError{file: out.Name, cause: err}
	}
	exit, err := w.fail(log, out, changedNote(out.Name, out.Result, claimed, now, w.runner.Config().Zone))
	return true, exit, err
}

// abortError is a file left in processing. It unwraps to pool.ErrAborted and to its cause.
type abortError struct {
	file   string
	reason string // when there is no cause: the run's Result.Aborted
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
		return []error{pool.ErrAborted}
	}
	return []error{pool.ErrAborted, e.cause}
}

// failEmpty moves an empty file from processing to failed, with a note.
func (w *Watcher) failEmpty(name string) (int, error) {
	path := filepath.Join(w.dir(ProcessingDir), name)
	out := FileOutcome{Name: name, Path: path, Exit: exitcode.Rejected,
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
	return w.failRefused(w.log.With("file", name), &out, note)
}

// failRefused moves a file refused as a whole to failed with its note, and writes its report.
func (w *Watcher) failRefused(log *slog.Logger, out *FileOutcome, note string) (int, error) {
	exit, err := w.fail(log, out, note)
	if err != nil {
		return exit, err
	}
	report, err := w.writeRefusedReport(out, note)
	if err != nil {
		log.Warn("the refused file has no report: its note says why it was refused", "err", err)
		return exit, nil
	}
	out.Result.Reports = append(out.Result.Reports, report)
	var b strings.Builder
	writeReports(&b, out.Result.Reports)
	if err := writeNote(out.Note, note+b.String()); err != nil {
		return exitcode.Aborted, fmt.Errorf("watch: write note: %w", err)
	}
	return exit, nil
}

// fail moves a file to failed with its note.
func (w *Watcher) fail(log *slog.Logger, out *FileOutcome, note string) (int, error) {
	dest, err := w.moveTo(out.Name, FailedDir)
	if err != nil {
		return exitcode.Aborted, err
	}
	out.Path, out.Note = dest, dest+WhySuffix
	if err := writeNote(out.Note, note); err != nil {
		return exitcode.Aborted, fmt.Errorf("watch: write note: %w", err)
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
	return dest, w.moveSignatures(ProcessingDir, name, sub, filepath.Base(dest))
}

// paidEarlier finds the run that paid a byte-identical file: among finished runs of the same SHA-256
// that needed nothing (exit 0), the first that sent something; a later drop of the same file is
// such a run too, but sent nothing.
func (w *Watcher) paidEarlier(ctx context.Context, sum string) (*ledger.Run, error) {
	found, err := w.db.FindRuns(ctx, ledger.RunFilter{FileSHA256: sum})
	if err != nil {
		return nil, err
	}
	var same []ledger.Run
	for _, r := range found {
		if runs.Completed(r) {
			same = append(same, r)
		}
	}
	if len(same) == 0 {
		return nil, nil
	}
	sort.SliceStable(same, func(i, j int) bool { return same[i].StartedAt.Before(same[j].StartedAt) })
	for i := range same {
		sent := false
		err := w.db.RunLines(ctx, same[i].ID, ledger.LineRead{}, func(l ledger.ReportLine) error {
			sent = sent || (!l.Row.Rejected && !l.Row.Skipped)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", same[i].ID, err)
		}
		if sent {
			return &same[i], nil
		}
	}
	return &same[0], nil
}
