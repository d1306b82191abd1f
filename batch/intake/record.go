package intake

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/runs"
	"github.com/payout/payout/batch/words"
	"github.com/payout/payout/ledger"
)

// paidElsewherePrefix begins the reason of a row skipped because another file paid it.
const paidElsewherePrefix = "already paid by "

// RecordLedger is what the recording pass reads and records: the file's lines and new payouts,
// the links of those that pay a retry, and the runs and events that tell who paid a skipped row.
type RecordLedger interface {
	Ledger
	Record(ctx context.Context, runID string, lines []ledger.RunRow, fresh []ledger.Payout) error
	Apply(ctx context.Context, changes ...ledger.Change) error
	GetRun(ctx context.Context, id string) (ledger.Run, error)
	Events(ctx context.Context, ref string) ([]ledger.Event, error)
}

// RecordConfig is what a Recorder records, and where it hands what it recorded.
type RecordConfig struct {
	Ledger RecordLedger
	Log    *slog.Logger
	Survey *Survey
	Run    ledger.Run // the run recording, of the file at Run.File
	// Pay is false when the file was rejected as a whole: every line is recorded, nothing paid.
	Pay    bool
	SameAs map[string]bool // runs of the same source, this one included
	// AllowPaidElsewhere makes the rows a run of another file paid a matter of information.
	AllowPaidElsewhere bool
	Now                func() time.Time
	Zone               *time.Location
	// Hand hands a recorded chunk's payouts, as the ledger holds them, on to be sent or looked up.
	Hand func(ctx context.Context, payouts []ledger.Payout) error
}

// Recorder is the second pass of a run: it reads the file again a chunk at a time, records each
// chunk in one transaction (the new payouts READY, and the lines their payouts cannot tell), and
// hands the chunk's rows on (RecordConfig.Hand). Only a chunk at a time is held.
type Recorder struct {
	cfg RecordConfig
	// paidElsewhere counts the skipped rows that a run of another input paid.
	paidElsewhere *paidElsewhere
}

// NewRecorder is the recording pass of the surveyed file cfg names.
func NewRecorder(cfg RecordConfig) *Recorder {
	return &Recorder{cfg: cfg, paidElsewhere: &paidElsewhere{db: cfg.Ledger, path: cfg.Run.File, sum: cfg.Run.FileSHA256,
		zone: cfg.Zone, quiet: cfg.AllowPaidElsewhere, runs: make(map[string]ledger.Run)}}
}

// SkippedOtherFile counts the rows skipped because a run of another file paid them.
func (rc *Recorder) SkippedOtherFile() int { return rc.paidElsewhere.count }

// WarnPaidElsewhere says, once, that rows were skipped because another file paid them.
func (rc *Recorder) WarnPaidElsewhere(ctx context.Context) { rc.paidElsewhere.warn(ctx, rc.cfg.Log) }

// Record runs the pass.
func (rc *Recorder) Record(ctx context.Context) error {
	chunk := 0
	scan := rc.cfg.Survey.scan
	scan.sends = true
	_, err := scan.each(ctx, func(rows []fileRow, existing map[string]ledger.Payout) error {
		if chunk >= len(rc.cfg.Survey.digests) || rc.cfg.Survey.scan.digest(rows) != rc.cfg.Survey.digests[chunk] {
			return fmt.Errorf("%w: lines %d to %d differ from what was validated; nothing of them was recorded or sent: run it again",
				ErrFileChanged, rows[0].raw.Line, rows[len(rows)-1].raw.Line)
		}
		chunk++
		return rc.chunk(ctx, rows, existing)
	})
	if err == nil && chunk != len(rc.cfg.Survey.digests) {
		err = fmt.Errorf("%w: it ends before the rows that were validated", ErrFileChanged)
	}
	return err
}

// chunk records one chunk and feeds its rows to the pool.
func (rc *Recorder) chunk(ctx context.Context, rows []fileRow, existing map[string]ledger.Payout) error {
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
		if !rc.cfg.Pay || !row.valid() {
			continue
		}
		p, ok := existing[row.payment.Ref]
		if !ok {
			p = toLedgerPayout(row.payment, rc.cfg.Run.ID)
			fresh = append(fresh, p)
		}
		payouts = append(payouts, p)
	}
	if err := rc.store(ctx, lines, fresh); err != nil {
		return err
	}
	rc.cfg.Log.Info("chunk recorded", "lines", fmt.Sprintf("%d-%d", rows[0].raw.Line, rows[len(rows)-1].raw.Line),
		"new_payouts", len(fresh), "to_pay", len(payouts))
	if !rc.cfg.Pay || len(payouts) == 0 {
		return nil
	}
	return rc.cfg.Hand(ctx, payouts)
}

// line is a row as the run keeps it, and whether it must be stored: a line whose payout this
// run recorded, or a run of the same input recorded at this line and accepted before, is told by
// that payout (ledger.DB.RunLines).
func (rc *Recorder) line(ctx context.Context, row *fileRow, existing map[string]ledger.Payout) (ledger.RunRow, bool, error) {
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
	if !rc.cfg.Pay {
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
	plain := old.Line == raw.Line && rc.cfg.SameAs[old.RunID]
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
	db    RecordLedger
	zone  *time.Location
	quiet bool // AllowPaidElsewhere
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
		if run, err = pe.db.GetRun(ctx, old.RunID); err != nil {
			return "", fmt.Errorf("run %s that recorded %s: %w", old.RunID, old.Ref, err)
		}
		pe.runs[old.RunID] = run
	}
	if runs.SameInput(run, pe.path, pe.sum) {
		return "", nil
	}
	if same, err := pe.sentBySameInput(ctx, old.Ref, pe.path, pe.sum); err != nil || same {
		return "", err
	}
	if pe.count == 0 {
		pe.first = run
	}
	pe.count++
	return fmt.Sprintf("%s%s in run %s on %s; not sent again", paidElsewherePrefix,
		filepath.Base(run.File), run.ID, words.FormatDay(run.StartedAt, pe.zone)), nil
}

// warn says, once, that rows were skipped because another file paid them.
func (pe *paidElsewhere) warn(ctx context.Context, log *slog.Logger) {
	if pe.count == 0 {
		return
	}
	level := slog.LevelWarn
	if pe.quiet {
		level = slog.LevelInfo
	}
	log.Log(ctx, level, "rows skipped because another file paid them: check that this is not last period's file or references",
		"rows", pe.count, "first_paid_by", filepath.Base(pe.first.File), "first_run", pe.first.ID,
		"on", words.FormatDay(pe.first.StartedAt, pe.zone))
}

// store records a chunk's lines and the payouts new to the ledger (ledger.Record), then, for
// each new payout that pays a retry, its link to the payout it replaces.
func (rc *Recorder) store(ctx context.Context, lines []ledger.RunRow, fresh []ledger.Payout) error {
	db, log, runID := rc.cfg.Ledger, rc.cfg.Log, rc.cfg.Run.ID
	if err := db.Record(ctx, runID, lines, fresh); err != nil {
		return err
	}
	refs := make([]string, len(fresh))
	for i, p := range fresh {
		refs[i] = p.Ref
	}
	retries, err := db.Retries(ctx, ledger.RetryFilter{New: refs})
	if err != nil || len(retries) == 0 {
		return err
	}
	// A payout is linked by the run that recorded it: one that another process's run recorded
	// first, between this pass's look-up and its Record, is that run's to link.
	recorded, err := db.Lookup(ctx, slices.Collect(maps.Keys(retries)), ledger.CheckFields)
	if err != nil {
		return err
	}
	for _, p := range fresh {
		retry, ok := retries[p.Ref]
		if !ok {
			continue
		}
		if recorded[p.Ref].RunID == runID {
			if err := db.Apply(ctx, outcome.RetryLinked(retry, runID)); err != nil {
				return err
			}
		}
		log.Info("paying a retry of a refused payout", "ref", retry.New, "retry_of", retry.Old)
	}
	return nil
}

// sentBySameInput reports whether the run in which the service accepted payout ref had this same
// input, although another file recorded the payout: a retry file's rows were recorded by the run
// it came from and accepted in the retry file's own run, which running it again merely resumes.
func (pe *paidElsewhere) sentBySameInput(ctx context.Context, ref, path, sum string) (bool, error) {
	events, err := pe.db.Events(ctx, ref)
	if err != nil {
		return false, err
	}
	for _, e := range events {
		if e.To != ledger.Submitted || e.From == ledger.Submitted || e.RunID == "" {
			continue
		}
		run, err := pe.db.GetRun(ctx, e.RunID)
		if err != nil {
			return false, err
		}
		return run.Kind != ledger.KindReconcile && runs.SameInput(run, path, sum), nil
	}
	return false, nil
}
