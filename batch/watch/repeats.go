package watch

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/repeats"
	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/batch/runs"
	"github.com/payout/payout/batch/signature"
	"github.com/payout/payout/ledger"
)

// A file whose only rejected rows are held as possible repeats waits in awaiting-approval, like
// a file that lacks signatures, instead of failing: nobody at the folder can run it again with
// --allow-repeat. Signers other than the file's maker accept its repeats by signing its plan in
// the namespace payout-repeat beside it (approval.JudgeRepeats); the next pass then pays it with
// its repeats allowed. Its maker is the account that owns the file, as dropped into the inbox.

// runnerFor is the runner that pays the file at path, whose SHA-256 is sum: with its repeats
// allowed when signers accepted them, and the verdict on those acceptances (Need 0 when none is
// beside the file).
func (w *Watcher) runnerFor(ctx context.Context, log *slog.Logger, path, sum string) (*batch.Runner, approval.Verdict, error) {
	runner := w.runner.WithReportName(runs.Unstamped(filepath.Base(path)))
	if w.runner.Config().Repeats.AllowAll || !approval.HasRepeatAcceptance(path) {
		return runner, approval.Verdict{}, nil
	}
	v, err := w.runner.RepeatsVerdict(ctx, path, fileOwner(path))
	if err != nil {
		return nil, v, err
	}
	if v.Missing() != "" {
		log.Warn("the acceptance of this file's repeats is not complete: they stay held", "why", v.Missing())
		return runner, v, nil
	}
	if err := w.recordAcceptedRepeats(ctx, path, sum, v); err != nil {
		return nil, v, err
	}
	policy := runner.Config().Repeats
	policy.AllowAll = true
	log.Info("repeats accepted by signers: the file is paid with them", "accepted_by", v.ApprovedBy())
	return runner.WithRepeats(policy), v, nil
}

// recordAcceptedRepeats records in the chain, before the run that pays them, each signature by
// which the file at path, whose SHA-256 is sum, is paid with its repeats
// (ledger.EventRepeatsAccepted): who accepted a held row outlasts the files beside it, which
// anyone who may write the folder could delete.
func (w *Watcher) recordAcceptedRepeats(ctx context.Context, path, sum string, v approval.Verdict) error {
	events := make([]ledger.LedgerEvent, len(v.Accepted))
	for i, a := range v.Accepted {
		events[i] = ledger.LedgerEvent{Kind: ledger.EventRepeatsAccepted,
			Detail: fmt.Sprintf("rows of %s held as possible repeats accepted by %s (%s)", filepath.Base(path), a.Principal(), a.Fingerprint),
			Facts: map[string]string{"principal": a.Principal(), "fingerprint": a.Fingerprint, "file": filepath.Base(path),
				"file_sha256": sum, "sig_file": a.File, "sig_sha256": a.SHA256, "valid_until": a.ValidUntil.Format(time.DateOnly),
				"signature": string(a.Signature)}}
	}
	_, err := w.db.AppendLedgerEvents(ctx, events...)
	return err
}

// AcceptedSuffix ends the note beside a file paid with its repeats accepted: who accepted them,
// by which signature files, which moved along with it.
const AcceptedSuffix = ".repeats-accepted.txt"

// recordAcceptance writes, beside a file that its run paid or finished with its repeats
// accepted, who accepted them: the auditor's answer to why a held row was paid.
func (w *Watcher) recordAcceptance(log *slog.Logger, out *FileOutcome, v approval.Verdict) {
	if out.Err != nil || out.Result.Submitted == 0 {
		return
	}
	if sub := filepath.Base(filepath.Dir(out.Path)); sub != DoneDir && sub != FailedDir {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s was paid with its rows held as possible repeats ACCEPTED (run %s) by: %s\n",
		filepath.Base(out.Path), out.Result.RunID, v.ApprovedBy())
	for _, a := range v.Accepted {
		fmt.Fprintf(&b, "  %s: signature file %s (SHA-256 %s), key %s, valid until %s\n",
			a.Principal(), a.File, a.SHA256, a.Fingerprint, a.ValidUntil.Format("2006-01-02"))
	}
	writeReports(&b, out.Result.Reports)
	if err := writeNote(out.Path+AcceptedSuffix, b.String()); err != nil {
		log.Warn("could not write who accepted the file's repeats", "err", err)
	}
}

// onlyRepeatsHeld reports whether every rejected row of a run is held as a possible repeat.
func onlyRepeatsHeld(rows []report.Row) bool {
	held := 0
	for _, row := range rows {
		if ledger.State(row.State) != ledger.Rejected {
			continue
		}
		if !strings.Contains(row.Message, read.ErrPossibleRepeat.Error()) {
			return false
		}
		held++
	}
	return held > 0
}

// awaitRepeats moves a file whose only rejected rows are held repeats from processing to
// awaiting-approval, with a note that lists them and says how signers accept them.
func (w *Watcher) awaitRepeats(ctx context.Context, log *slog.Logger, out *FileOutcome, rows []report.Row, v approval.Verdict) (int, error) {
	dest, err := w.moveBetween(ProcessingDir, out.Name, AwaitingDir)
	if err != nil {
		return exitcode.Aborted, err
	}
	out.Path, out.Note, out.Exit = dest, dest+WhySuffix, exitcode.AwaitingApproval
	if err := writeNote(out.Note, w.repeatsNote(dest, out.Result, rows, v)); err != nil {
		return exitcode.Aborted, fmt.Errorf("watch: write note: %w", err)
	}
	if key, err := w.tryKey(ctx, dest); err == nil {
		w.tried[out.Result.SHA256] = key
	}
	log.Warn("rows held as possible repeats: the file waits in "+AwaitingDir+" for signers to accept them", "run", out.Result.RunID,
		"held", out.Result.Rejected, "note", out.Note)
	return exitcode.AwaitingApproval, nil
}

// repeatsNote says which rows are held, what each repeats, and how signers accept them.
func (w *Watcher) repeatsNote(path string, res batch.Result, rows []report.Row, v approval.Verdict) string {
	var b strings.Builder
	name := filepath.Base(path)
	fmt.Fprintf(&b, "%s was NOT paid: %d of its %d rows are %s.\n", name, res.Rejected, res.Rows, heldMark)
	b.WriteString(acceptanceLine(path, v))
	b.WriteString("\nHeld rows (each pays the account, bank and amount of an earlier payout):\n")
	listed := 0
	for _, row := range rows {
		if ledger.State(row.State) != ledger.Rejected {
			continue
		}
		if listed == whyRowsShown {
			fmt.Fprintf(&b, "  ... and %d more: see the report.\n", res.Rejected-whyRowsShown)
			break
		}
		listed++
		msg := repeats.WithoutHint(row.Message)
		amount := row.AmountText // as written, when the ledger holds no number for a rejected row
		if amount == "" {
			amount = row.Amount.StringFixed(2)
		}
		fmt.Fprintf(&b, "  line %d, %s: MYR %s, %s\n", row.Line, row.Ref, amount, msg)
	}
	abs := absolute(path)
	fmt.Fprintf(&b, "\nWhat to do:\n"+
		"  If these are new payments meant to repeat earlier ones, signers other than the person who dropped\n"+
		"  the file accept them by signing its plan, beside it, with their own key:\n"+
		"    payout approve --accept-repeats %s\n"+
		"  or: payout plan --allow-repeats %s | ssh-keygen -Y sign -f KEY -n %s > %s.NAME.sig\n"+
		"  The next pass of payout watch pays the whole file. If they are repeats by mistake, delete the file\n"+
		"  (or drop a corrected one into the inbox): nothing of it was paid.\n", abs, abs, signature.NamespaceRepeat, abs)
	writeReports(&b, res.Reports)
	return b.String()
}

// heldMark says, in the first line of its note, that a waiting file waits for its repeats to be
// accepted: a later pass, maybe of another process, reads it there.
const heldMark = "held as possible repeats; it waits for signers to accept them"

// acceptanceLinePrefix opens the line of a held file's note that says what its acceptance lacks.
const acceptanceLinePrefix = "  Acceptance: "

// acceptanceLine is the line of a held file's note that says what its acceptance lacks.
func acceptanceLine(path string, v approval.Verdict) string {
	if why := v.Missing(); why != "" {
		return acceptanceLinePrefix + why + "\n"
	}
	return fmt.Sprintf("%sneeds %d distinct signer(s), not the file's maker (%s)\n", acceptanceLinePrefix, max(v.Need, 1), fileOwner(path))
}

// repeatsStillWait reports whether a waiting file whose note says it waits for its repeats to be
// accepted still does, and brings its note's acceptance line up to date. Such a file is run
// again only once its acceptance is complete: each run of it writes reports, and a pass comes
// every few minutes.
func (w *Watcher) repeatsStillWait(ctx context.Context, path string) bool {
	note, err := os.ReadFile(path + WhySuffix)
	first, _, _ := strings.Cut(string(note), "\n")
	if err != nil || !strings.Contains(first, heldMark) {
		return false
	}
	if !approval.HasRepeatAcceptance(path) {
		return true
	}
	v, err := w.runner.RepeatsVerdict(ctx, path, fileOwner(path))
	if err != nil {
		w.log.Warn("could not check the acceptance of a waiting file's repeats", "file", filepath.Base(path), "err", err)
		return true
	}
	if v.Missing() == "" {
		return false
	}
	var b strings.Builder
	for _, line := range strings.SplitAfter(string(note), "\n") {
		if strings.HasPrefix(line, acceptanceLinePrefix) {
			line = acceptanceLine(path, v)
		}
		b.WriteString(line)
	}
	if err := rewriteNote(path+WhySuffix, b.String()); err != nil {
		w.log.Warn("could not bring a waiting file's note up to date", "file", filepath.Base(path), "err", err)
	}
	return true
}

// fileOwner is the name of the account that owns the file at path, or "uid N" when it has none.
func fileOwner(path string) string {
	info, err := os.Stat(path)
	if err != nil {
		return ""
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	uid := strconv.FormatUint(uint64(st.Uid), 10)
	if u, err := user.LookupId(uid); err == nil {
		return u.Username
	}
	return "uid " + uid
}
