package watch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/atomicfile"
	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/ledger"
)

// AwaitingDir holds the files that a run refused to pay for want of a second person's approval
// (the runner's approval policy). Each pass pays those approved since, and fails those rejected.
const AwaitingDir = "awaiting-approval"

// await moves a file whose run paid nothing for want of an approval from processing to
// awaiting-approval, with a note naming the command that approves it.
func (w *Watcher) await(ctx context.Context, log *slog.Logger, out *FileOutcome) (int, error) {
	dest, err := w.moveBetween(ProcessingDir, out.Name, AwaitingDir)
	if err != nil {
		return batch.ExitAborted, err
	}
	out.Path, out.Note = dest, dest+WhySuffix
	if err := w.runner.NoteAwaitingAt(ctx, out.Result.RunID, out.Result.SHA256, dest); err != nil {
		return batch.ExitAborted, &abortError{file: out.Name, cause: err}
	}
	if err := atomicfile.WriteBytes(out.Note, noteMode, []byte(w.awaitingNote(dest, out.Result.AwaitingApproval, out.Result.Plan))); err != nil {
		return batch.ExitAborted, fmt.Errorf("watch: write note: %w", err)
	}
	log.Warn("file awaits a second person's approval: moved to "+AwaitingDir, "run", out.Result.RunID,
		"approve_with", batch.ApproveCommand(absolute(dest)))
	return batch.ExitAwaitingApproval, nil
}

// recheckAwaiting pays the files of awaiting-approval approved since they were put there, moves
// those rejected to failed, and leaves the others waiting; it returns exit 5 while any waits.
func (w *Watcher) recheckAwaiting(ctx context.Context) (int, error) {
	names, err := w.awaitingFiles()
	if err != nil || len(names) == 0 {
		return batch.ExitOK, err
	}
	if !w.runner.Config().Approval.Required() {
		w.log.Info("files wait in "+AwaitingDir+" but no approval is required now: move them back to the inbox to pay them", "files", len(names))
		return batch.ExitOK, nil
	}
	worst := batch.ExitOK
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return batch.ExitAborted, fmt.Errorf("%w: %w: %s left in %s", batch.ErrAborted, err, name, AwaitingDir)
		}
		exit, err := w.recheck(ctx, name)
		worst = batch.WorseExit(worst, exit)
		if err != nil {
			return worst, err
		}
	}
	return worst, nil
}

// recheck acts on the latest decision on one waiting file. An approval is tried once: a run that
// finds it void (the provider list changed, say) puts the file back with a note saying why.
func (w *Watcher) recheck(ctx context.Context, name string) (int, error) {
	path := filepath.Join(w.dir(AwaitingDir), name)
	sum, err := batch.FileSHA256(path)
	if errors.Is(err, fs.ErrNotExist) {
		return batch.ExitOK, nil
	}
	if err != nil {
		return batch.ExitAborted, fmt.Errorf("watch: %s: %w", path, err)
	}
	decision, ok, err := w.runner.LatestDecision(ctx, sum)
	switch {
	case err != nil:
		return batch.ExitAborted, fmt.Errorf("watch: %s: %w", name, err)
	case !ok || w.tried[sum] == decision.ID:
		return batch.ExitAwaitingApproval, nil
	case decision.Decision == ledger.ApprovalRejected:
		return w.failRejected(name, decision)
	case w.runner.ApprovalExpired(decision):
		why := fmt.Sprintf("the approval by %s on %s EXPIRED after %s: it must be approved again", decision.Actor,
			report.FormatTime(decision.At, w.runner.Config().Zone), w.runner.Config().Approval.ExpiryOrDefault())
		return batch.ExitAwaitingApproval, rewriteNote(path+WhySuffix, w.awaitingNote(path, why, nil))
	}
	w.tried[sum] = decision.ID
	target := w.freeName(name, ProcessingDir, DoneDir, FailedDir)
	if err := os.Rename(path, filepath.Join(w.dir(ProcessingDir), target)); err != nil {
		return batch.ExitAborted, fmt.Errorf("watch: move %s to %s: %w", name, ProcessingDir, err)
	}
	_ = os.Remove(path + WhySuffix)
	w.log.Info("approved file: paying it", "file", name, "approved_by", decision.Actor, "at", decision.At)
	return w.process(ctx, target)
}

// failRejected moves a rejected file from awaiting-approval to failed, with the rejection's reason.
func (w *Watcher) failRejected(name string, decision ledger.Approval) (int, error) {
	dest, err := w.moveBetween(AwaitingDir, name, FailedDir)
	if err != nil {
		return batch.ExitAborted, err
	}
	_ = os.Remove(filepath.Join(w.dir(AwaitingDir), name) + WhySuffix)
	note := fmt.Sprintf("%s was NOT paid: %s REJECTED it on %s:\n  %s\n\nWhat to do:\n"+
		"  Correct the file as the reason says and drop it into the inbox again: it then awaits a second\n"+
		"  person's approval again. Nothing of this file was paid.\n",
		filepath.Base(dest), decision.Actor, report.FormatTime(decision.At, w.runner.Config().Zone), decision.Reason)
	if err := atomicfile.WriteBytes(dest+WhySuffix, noteMode, []byte(note)); err != nil {
		return batch.ExitAborted, fmt.Errorf("watch: write note: %w", err)
	}
	w.log.Warn("rejected file moved to failed: see the note beside it", "file", name, "rejected_by", decision.Actor, "note", dest+WhySuffix)
	return batch.ExitRejected, nil
}

// awaitingNote says why a file waits and how a second person has it paid or refused.
func (w *Watcher) awaitingNote(path, why string, plan *batch.Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s was NOT paid: it awaits a second person's approval.\n  %s\n", filepath.Base(path), why)
	if plan != nil {
		fmt.Fprintf(&b, "\nPlan: %d rows, MYR %s; %d new payouts, MYR %s; SHA-256 %s\n",
			plan.Rows, plan.Total.StringFixed(2), plan.NewPayouts, plan.NewTotal.StringFixed(2), plan.FileSHA256)
	}
	fmt.Fprintf(&b, "\nWhat to do:\n  Someone other than the file's owner checks it and approves it:\n    %s\n"+
		"  The next pass of payout watch pays it. Or refuses it (it then moves to failed):\n    payout reject %s --reason TEXT\n"+
		"  An approval holds for %s; any change to the file voids it.\n",
		batch.ApproveCommand(absolute(path)), absolute(path), w.runner.Config().Approval.ExpiryOrDefault())
	return b.String()
}

// rewriteNote writes a note unless it already says that.
func rewriteNote(path, note string) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, []byte(note)) {
		return nil
	}
	if err := atomicfile.WriteBytes(path, noteMode, []byte(note)); err != nil {
		return fmt.Errorf("watch: write note: %w", err)
	}
	return nil
}

// awaitingFiles lists the payout files waiting for an approval, by name.
func (w *Watcher) awaitingFiles() ([]string, error) {
	entries, err := os.ReadDir(w.dir(AwaitingDir))
	if err != nil {
		return nil, fmt.Errorf("watch: read %s: %w", AwaitingDir, err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && payableName(e.Name()) && !partialName(e.Name()) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

func (w *Watcher) moveBetween(from, name, to string) (string, error) {
	dest := filepath.Join(w.dir(to), w.freeName(name, to))
	if err := os.Rename(filepath.Join(w.dir(from), name), dest); err != nil {
		return "", fmt.Errorf("watch: move %s to %s: %w", name, to, err)
	}
	return dest, nil
}

// absolute is path made absolute for a command a person copies, from wherever they are.
func absolute(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}
