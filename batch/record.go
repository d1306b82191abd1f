package batch

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/batch/runs"
	"github.com/payout/payout/ledger"
)

// paidElsewherePrefix begins the reason of a row skipped because another file paid it.
const paidElsewherePrefix = "already paid by "

// recorder is the second pass of a run: it reads the file again a chunk at a time, records each
// chunk in one transaction (the new payouts READY, and the lines their payouts cannot tell), and
// hands the chunk's rows to the workers. Only a chunk at a time is held.
type recorder struct {
	r      *Runner
	sv     *survey
	run    ledger.Run
	pay    bool // false: the file was rejected as a whole, and every line is recorded, nothing paid
	sub    *submission
	log    *slog.Logger
	feed   chan<- feedBatch
	sameAs map[string]bool // runs of the same source, this one included
	// paidElsewhere counts the skipped rows that a run of another input paid.
	paidElsewhere *paidElsewhere
}

// record runs the pass; a run's pool takes what it feeds until it closes the feed.
func (rc *recorder) record(ctx context.Context) error {
	chunk := 0
	scan := rc.sv.scan
	scan.sends = true
	_, err := scan.each(ctx, func(rows []fileRow, existing map[string]ledger.Payout) error {
		if chunk >= len(rc.sv.digests) || rc.sv.scan.digest(rows) != rc.sv.digests[chunk] {
			return fmt.Errorf("%w: lines %d to %d differ from what was validated; nothing of them was recorded or sent: run it again",
				ErrFileChanged, rows[0].raw.Line, rows[len(rows)-1].raw.Line)
		}
		chunk++
		return rc.chunk(ctx, rows, existing)
	})
	if err == nil && chunk != len(rc.sv.digests) {
		err = fmt.Errorf("%w: it ends before the rows that were validated", ErrFileChanged)
	}
	return err
}

// chunk records one chunk and feeds its rows to the pool.
func (rc *recorder) chunk(ctx context.Context, rows []fileRow, existing map[string]ledger.Payout) error {
	var lines []ledger.RunRow
	var fresh []ledger.Payout
	var payouts []ledger.Payout
	for i := range rows {
		row := &rows[i]
		line, keep, err := rc.line(ctx, row, existing)
		if err != nil {
			return err
		}
		if keep {
			lines = append(lines, line)
		}
		if !rc.pay || !row.valid() {
			continue
		}
		p, ok := existing[row.payment.Ref]
		if !ok {
			p = toLedgerPayout(row.payment, rc.run.ID)
			fresh = append(fresh, p)
		}
		payouts = append(payouts, p)
	}
	if err := rc.r.record(ctx, rc.log, rc.run.ID, lines, fresh); err != nil {
		return err
	}
	rc.log.Info("chunk recorded", "lines", fmt.Sprintf("%d-%d", rows[0].raw.Line, rows[len(rows)-1].raw.Line),
		"new_payouts", len(fresh), "to_pay", len(payouts))
	if !rc.pay || len(payouts) == 0 {
		return nil
	}
	tasks, done := rc.sub.take(payouts, rc.r.cfg.Now())
	select {
	case rc.feed <- feedBatch{Tasks: tasks, Done: done}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// line is a row as the run keeps it, and whether it must be stored: a line whose payout this
// run recorded, or a run of the same input recorded at this line and accepted before, is told by
// that payout (ledger.DB.EachRunLine).
func (rc *recorder) line(ctx context.Context, row *fileRow, existing map[string]ledger.Payout) (ledger.RunRow, bool, error) {
	raw := row.raw
	rr := ledger.RunRow{Line: raw.Line, Ref: raw.Ref, Recipient: raw.Recipient, Bank: raw.Bank,
		Account: raw.Account, Amount: raw.Amount, Description: raw.Description}
	if !row.valid() {
		rr.Rejected, rr.Reason = true, joinRowErrors(row.errs)
		return rr, true, nil
	}
	pay := row.payment
	rr.Ref, rr.Recipient, rr.ProviderID, rr.Bank = pay.Ref, pay.Recipient, pay.ProviderID, pay.Bank
	rr.Account, rr.Amount, rr.Description = pay.Account, pay.Amount.StringFixed(2), pay.Description
	rr.Reason = rowWarnings(row)
	if !rc.pay {
		return rr, true, nil
	}
	old, ok := existing[pay.Ref]
	if !ok {
		return rr, rr.Reason != "", nil
	}
	if !outcome.AcceptedEarlier(old.State) {
		return rr, true, nil // resumed: this run sends it or looks it up
	}
	rr.Skipped = true
	plain := old.Line == raw.Line && rc.sameAs[old.RunID]
	reason, err := rc.paidElsewhere.note(ctx, old)
	if err != nil {
		return rr, false, err
	}
	if reason != "" {
		rr.Reason = runs.JoinMessages(reason, rr.Reason)
		rr.PaidElsewhere = true
		plain = false
	}
	return rr, !plain || rr.Reason != "", nil
}

// paidElsewhere says which skipped rows a run of another input paid, and counts them.
type paidElsewhere struct {
	r     *Runner
	path  string
	sum   string
	runs  map[string]ledger.Run
	count int
	first ledger.Run
}

// note returns the reason of a skipped row paid by a run of another input, or "" when a run of
// this same input paid it: the resume working as meant, which stays quiet.
func (pe *paidElsewhere) note(ctx context.Context, old ledger.Payout) (string, error) {
	run, ok := pe.runs[old.RunID]
	if !ok {
		var err error
		if run, err = pe.r.cfg.Ledger.GetRun(ctx, old.RunID); err != nil {
			return "", fmt.Errorf("run %s that recorded %s: %w", old.RunID, old.Ref, err)
		}
		pe.runs[old.RunID] = run
	}
	if runs.SameInput(run, pe.path, pe.sum) {
		return "", nil
	}
	if same, err := pe.r.sentBySameInput(ctx, old.Ref, pe.path, pe.sum); err != nil || same {
		return "", err
	}
	if pe.count == 0 {
		pe.first = run
	}
	pe.count++
	return fmt.Sprintf("%s%s in run %s on %s; not sent again", paidElsewherePrefix,
		filepath.Base(run.File), run.ID, report.FormatDay(run.StartedAt, pe.r.cfg.Zone)), nil
}

// warn says, once, that rows were skipped because another file paid them.
func (pe *paidElsewhere) warn(ctx context.Context, log *slog.Logger) {
	if pe.count == 0 {
		return
	}
	level := slog.LevelWarn
	if pe.r.cfg.AllowPaidElsewhere {
		level = slog.LevelInfo
	}
	log.Log(ctx, level, "rows skipped because another file paid them: check that this is not last period's file or references",
		"rows", pe.count, "first_paid_by", filepath.Base(pe.first.File), "first_run", pe.first.ID,
		"on", report.FormatDay(pe.first.StartedAt, pe.r.cfg.Zone))
}
