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

	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/intake"
	"github.com/payout/payout/batch/pool"
	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/ledger"
)

// AwaitingDir holds the files whose plan lacks the signatures the ledger's approval policy asks
// for. Signers put their signatures beside the file there (`FILE.<anything>.sig`); each pass runs
// a waiting file again when its signatures (or the policy) changed since it was last tried, and
// moves a file refused by a signed refusal to failed. A file's signatures and refusals move
// with it from folder to folder.
const AwaitingDir = "awaiting-approval"

// await moves a file whose run paid nothing for want of signatures from processing to
// awaiting-approval (or to failed when a signer refused it), with a note saying what is missing.
func (w *Watcher) await(ctx context.Context, log *slog.Logger, out *FileOutcome) (int, error) {
	why := out.Result.AwaitingApproval
	if strings.HasPrefix(why, "REJECTED") {
		note := fmt.Sprintf("%s was NOT paid: %s\n\nWhat to do:\n  Correct the file as the reason says and drop it into the inbox again, without the\n"+
			"  refusal files: its new plan is then signed again. Nothing of this file was paid.\n", out.Name, why)
		out.Exit = exitcode.Rejected
		return w.fail(log, out, note)
	}
	dest, err := w.moveBetween(ProcessingDir, out.Name, AwaitingDir)
	if err != nil {
		return exitcode.Aborted, err
	}
	out.Path, out.Note = dest, dest+WhySuffix
	if err := writeNote(out.Note, w.awaitingNote(dest, why, out.Result.Plan)); err != nil {
		return exitcode.Aborted, fmt.Errorf("watch: write note: %w", err)
	}
	if key, err := w.tryKey(ctx, dest); err == nil {
		w.tried[out.Result.SHA256] = key
	}
	log.Warn("file's plan lacks signatures: moved to "+AwaitingDir, "run", out.Result.RunID, "why", why,
		"approve_with", approval.Command(absolute(dest)))
	return exitcode.AwaitingApproval, nil
}

// tryKey sums up what a waiting file's next try depends on: its signature files and the policy.
func (w *Watcher) tryKey(ctx context.Context, path string) (string, error) {
	sigs, ignored, err := approval.SignatureFiles(path)
	if err != nil {
		return "", err
	}
	pol, err := w.db.ApprovalPolicy(ctx)
	if err != nil && !errors.Is(err, ledger.ErrPolicyLost) { // a lost policy waits for a restore, as unsigned files wait
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "policy %d %d\n", pol.Approvals, pol.Event.ID)
	for _, s := range sigs {
		fmt.Fprintf(&b, "%s %s\n", filepath.Base(s.Path), s.SHA256)
	}
	for _, why := range ignored {
		fmt.Fprintf(&b, "%s\n", why)
	}
	return b.String(), nil
}

// recheckAwaiting runs again the waiting files whose signatures or policy changed since they
// were last tried; it returns exit 5 while any waits.
func (w *Watcher) recheckAwaiting(ctx context.Context) (int, error) {
	names, err := w.awaitingFiles()
	if err != nil || len(names) == 0 {
		return exitcode.OK, err
	}
	worst := exitcode.OK
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return exitcode.Aborted, fmt.Errorf("%w: %w: %s left in %s", pool.ErrAborted, err, name, AwaitingDir)
		}
		exit, err := w.recheck(ctx, name)
		worst = exitcode.Worse(worst, exit)
		if err != nil {
			return worst, err
		}
	}
	return worst, nil
}

// recheck runs one waiting file again when what its run depends on changed.
func (w *Watcher) recheck(ctx context.Context, name string) (int, error) {
	path := filepath.Join(w.dir(AwaitingDir), name)
	sum, err := read.FileSHA256(path)
	if errors.Is(err, fs.ErrNotExist) {
		return exitcode.OK, nil
	}
	if err != nil {
		return exitcode.Aborted, fmt.Errorf("watch: %s: %w", path, err)
	}
	key, err := w.tryKey(ctx, path)
	if err != nil {
		return exitcode.Aborted, fmt.Errorf("watch: %s: %w", name, err)
	}
	if w.tried[sum] == key {
		return exitcode.AwaitingApproval, nil
	}
	w.tried[sum] = key
	if w.repeatsStillWait(ctx, path) {
		return exitcode.AwaitingApproval, nil
	}
	target := w.freeName(name, ProcessingDir, DoneDir, FailedDir)
	if err := os.Rename(path, filepath.Join(w.dir(ProcessingDir), target)); err != nil {
		return exitcode.Aborted, fmt.Errorf("watch: move %s to %s: %w", name, ProcessingDir, err)
	}
	if err := w.moveSignatures(AwaitingDir, name, ProcessingDir, target); err != nil {
		return exitcode.Aborted, err
	}
	_ = os.Remove(path + WhySuffix)
	w.log.Info("signatures or policy changed for a waiting file: running it again", "file", name)
	return w.process(ctx, target)
}

// moveSignatures moves the signature and refusal files of the file name in folder from, named
// after it, beside the file now named to in folder dest.
func (w *Watcher) moveSignatures(from, name, dest, to string) error {
	entries, err := os.ReadDir(w.dir(from))
	if err != nil {
		return fmt.Errorf("watch: read %s: %w", from, err)
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), name+".")
		if !ok || !e.Type().IsRegular() || !(strings.HasSuffix(rest, approval.SigSuffix) || strings.HasSuffix(rest, approval.RefusalSuffix)) {
			continue
		}
		if err := os.Rename(filepath.Join(w.dir(from), e.Name()), filepath.Join(w.dir(dest), to+"."+rest)); err != nil {
			return fmt.Errorf("watch: move %s to %s: %w", e.Name(), dest, err)
		}
	}
	return nil
}

// awaitingNote says why a file waits and how signers have it paid or refused.
func (w *Watcher) awaitingNote(path, why string, plan *intake.Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s was NOT paid: its plan lacks signatures.\n  %s\n", filepath.Base(path), why)
	if plan != nil {
		fmt.Fprintf(&b, "\nPlan: %d rows (%d payable), MYR %s; %d new payouts, MYR %s; file SHA-256 %s; plan SHA-256 %s\n",
			plan.Rows, plan.Payable, plan.Total.StringFixed(2), plan.NewPayouts, plan.NewTotal.StringFixed(2), plan.FileSHA256, plan.Digest)
	}
	abs := absolute(path)
	fmt.Fprintf(&b, "\nWhat to do:\n  Each signer checks the plan and signs it beside the file, with their own key:\n    %s\n"+
		"  or: payout plan %s | ssh-keygen -Y sign -f KEY -n payout-plan > %s.NAME.sig\n"+
		"  The next pass of payout watch pays it. Or a signer refuses it (it then moves to failed):\n    payout reject %s --reason TEXT\n"+
		"  A signature holds until the valid-until date it signed (at most %s ahead); any change to the file voids it.\n",
		approval.Command(abs), abs, abs, abs, approval.ValidityText(w.runner.Config().Approval.ValidityOrDefault()))
	return b.String()
}

// rewriteNote writes a note unless it already says that.
func rewriteNote(path, note string) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, []byte(note)) {
		return nil
	}
	if err := writeNote(path, note); err != nil {
		return fmt.Errorf("watch: write note: %w", err)
	}
	return nil
}

// awaitingFiles lists the payout files waiting for signatures, by name.
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
	return dest, w.moveSignatures(from, name, to, filepath.Base(dest))
}

// absolute is path made absolute for a command a person copies, from wherever they are.
func absolute(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}
