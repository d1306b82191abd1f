package retry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/runid"
	"github.com/payout/payout/ledger"
)

// A run's retry file holds the rows of its input still unpaid, in the input's own columns and
// order, plus Column saying why each is there: fixed and run, it pays exactly those rows.
// A row is unpaid unless its payout is SUCCEEDED or SUBMITTED (pending at the service); rows
// skipped because an earlier run paid them are among the paid. Each row keeps its own reference,
// so that the ledger's exactly-once rules make running it safe (a row whose outcome is unknown is
// looked up before anything is sent), except a row the service refused with nothing created
// (FAILED, confirmed): its reference is final, and the row is offered under a reference derived
// from it (Ref), recorded in the ledger as a retry of it before the file is written. A
// payout has at most one retry, so every retry file of a run offers the same derived reference,
// and paying it twice is a rerun that pays nothing more.

// Column is the column a retry file adds after the input's own: why each row is there. The
// reader ignores it, as it ignores every column it does not know.
const Column = "retry_reason"

// WhyUnknown begins the reason of a row whose outcome is unknown.
var WhyUnknown = outcome.Words(ledger.Unknown) + ": run `payout reconcile` first; paying this row again before that could pay twice"

// Ref is the n-th reference derived from root to pay again a payout refused under it:
// root-Rn, or, when that is longer than a reference may be, root cut short with a hash of the
// whole root before -Rn, so that two long roots alike at the start still differ.
func Ref(root string, n int) string {
	suffix := "-R" + strconv.Itoa(n)
	if len(root)+len(suffix) <= read.MaxRefLength {
		return root + suffix
	}
	sum := sha256.Sum256([]byte(root))
	hash := hex.EncodeToString(sum[:5])
	keep := read.MaxRefLength - len(suffix) - len(hash) - 1
	return root[:keep] + "-" + hash + suffix
}

// MayBeRef reports whether ref has the shape of a Ref (it ends in -R and a number):
// no other reference can be a retry's, so a check of a file's rows asks the ledger only of these.
func MayBeRef(ref string) bool {
	i := strings.LastIndex(ref, "-R")
	if i < 0 || i+2 == len(ref) {
		return false
	}
	for _, c := range ref[i+2:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// File is a retry file written, and how many rows it holds.
type File struct {
	CSV, XLSX string // XLSX is empty unless the run's input was an XLSX
	Rows      int
}

// List is the paths written.
func (f File) List() []string {
	var out []string
	for _, p := range []string{f.CSV, f.XLSX} {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Ledger is what writing a retry file reads and records: the run, its lines and their payouts
// as they stand, and a refused payout's one retry reference.
type Ledger interface {
	ledger.RetryFiles
	GetRun(ctx context.Context, id string) (ledger.Run, error)
	RunLines(ctx context.Context, runID string, how ledger.LineRead, fn func(ledger.ReportLine) error) error
	Lookup(ctx context.Context, refs []string, how ledger.LookupFields) (map[string]ledger.Payout, error)
	Get(ctx context.Context, ref string) (ledger.Payout, error)
}

// Write writes the retry file of a run into dir: `<name without extension>.<run
// id>.retry.csv`, and `.retry.xlsx` too when the run's input was an XLSX, with ".reconciled-<UTC
// time of stamp>" before ".retry" when stamp is set (a reconciliation writes them again, beside
// and never over the run's own, which its user may be editing). A run whose every row is paid
// gets none: the zero File. fileRejected says that the run sent nothing because its file
// was rejected as a whole. A retry reference it offers is recorded as claimed at now.
func Write(ctx context.Context, db Ledger, runID, dir, name string, fileRejected bool, stamp, now time.Time) (File, error) {
	run, err := db.GetRun(ctx, runID)
	if err != nil {
		return File{}, err
	}
	rows, err := unpaidRows(ctx, db, run, fileRejected, now)
	if err != nil || len(rows) == 0 {
		return File{}, err
	}
	columns := run.Columns
	if name == "" {
		name = filepath.Base(run.File)
	}
	base := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	if base == "" || base == "." {
		base = "payout"
	}
	stem := filepath.Join(dir, base+"."+runID)
	if !stamp.IsZero() {
		stem += ".reconciled-" + runid.Stamp(stamp)
	}
	table := retryTableOf(columns, rows)
	f := File{CSV: stem + ".retry.csv", Rows: len(rows)}
	if err := writeRetryCSV(dir, f.CSV, table); err != nil {
		return File{}, err
	}
	if strings.EqualFold(filepath.Ext(run.File), ".xlsx") {
		f.XLSX = stem + ".retry.xlsx"
		if err := writeRetryXLSX(f.XLSX, table); err != nil {
			return File{}, err
		}
	}
	return f, nil
}

// retryRow is one unpaid row: its values by input column (read.Col names) and why it is there.
type retryRow struct {
	values   map[string]string
	why      string
	rejected bool // values as read, not as recorded
}

// unpaidRows is every line of a run still unpaid, in line order.
func unpaidRows(ctx context.Context, db Ledger, run ledger.Run, fileRejected bool, now time.Time) ([]retryRow, error) {
	// Only the lines not yet paid are kept: a paid run of any size holds next to nothing here.
	var lines []ledger.ReportLine
	err := db.RunLines(ctx, run.ID, ledger.LineRead{}, func(l ledger.ReportLine) error {
		if l.Row.Rejected || l.Payout == nil || !outcome.AcceptedEarlier(l.Payout.State) {
			lines = append(lines, l)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var rejectedRefs []string
	for _, l := range lines {
		if l.Row.Rejected && l.Row.Ref != "" {
			rejectedRefs = append(rejectedRefs, l.Row.Ref)
		}
	}
	later, err := db.Lookup(ctx, rejectedRefs, ledger.WholePayouts)
	if err != nil {
		return nil, err
	}
	var out []retryRow
	for _, l := range lines {
		rr := l.Row
		var row retryRow
		var unpaid bool
		switch p, ok := later[rr.Ref]; {
		case rr.Rejected && ok && p.RunID != run.ID && p.CreatedAt.After(run.StartedAt):
			// A later run recorded this reference: the row as corrected, paid from a retry file.
			row, unpaid, err = payoutRetryRow(ctx, db, run.ID, p, now)
		case rr.Rejected:
			row, unpaid = rejectedRetryRow(rr), true
		case l.Payout != nil:
			row, unpaid, err = payoutRetryRow(ctx, db, run.ID, *l.Payout, now)
		default:
			why := outcome.Words(ledger.Ready) + ": the run stopped before this row, and nothing was created for it"
			if fileRejected {
				why = outcome.Words(ledger.Ready) + ": the file was rejected as a whole, so nothing of it was paid"
			}
			row, unpaid = retryRow{values: runRowValues(rr), why: why}, true
		}
		if err != nil {
			return nil, err
		}
		if unpaid {
			out = append(out, row)
		}
	}
	return out, nil
}

// rejectedRetryRow is a rejected row with its values as read, to be corrected in the file.
func rejectedRetryRow(rr ledger.RunRow) retryRow {
	return retryRow{values: runRowValues(rr), why: "rejected: " + rr.Reason + "; correct it here: nothing of it was paid", rejected: true}
}

func runRowValues(rr ledger.RunRow) map[string]string {
	v := map[string]string{read.ColRef: rr.Ref, read.ColRecipient: rr.Recipient, read.ColBank: rr.Bank,
		read.ColAccount: rr.Account, read.ColAmount: rr.Amount, read.ColDescription: rr.Description}
	if rr.ProviderID != 0 {
		v[read.ColServiceID] = strconv.FormatInt(rr.ProviderID, 10)
	}
	return v
}

func payoutValues(p ledger.Payout, ref string) map[string]string {
	return map[string]string{read.ColRef: ref, read.ColRecipient: p.Recipient, read.ColBank: p.Bank,
		read.ColServiceID: strconv.FormatInt(p.ProviderID, 10), read.ColAccount: p.Account,
		read.ColAmount: p.Amount.StringFixed(2), read.ColDescription: p.Description}
}

// payoutRetryRow is the row of a recorded payout, or unpaid false when it is paid. A refused
// payout is followed through its retries to the newest: the row is paid when that one is.
func payoutRetryRow(ctx context.Context, db Ledger, runID string, p ledger.Payout, now time.Time) (retryRow, bool, error) {
	for range maxRetries {
		if p.State != ledger.Failed {
			break
		}
		retries, err := db.Retries(ctx, ledger.RetryFilter{Old: []string{p.Ref}})
		retry, ok := retries[p.Ref]
		if err != nil || !ok {
			return failedRetryRow(ctx, db, runID, p, now, err)
		}
		next, err := db.Get(ctx, retry.New)
		if errors.Is(err, ledger.ErrNotFound) {
			// Offered by an earlier retry file and not paid yet: the same reference again.
			return retryRow{values: payoutValues(p, retry.New), why: failedWhy(p, retry.New)}, true, nil
		}
		if err != nil {
			return retryRow{}, false, err
		}
		p = next
	}
	switch {
	case p.State.Accepted():
		return retryRow{}, false, nil
	case p.State == ledger.Failed:
		return retryRow{}, false, fmt.Errorf("payout %s: more than %d retries", p.Ref, maxRetries)
	case p.State.OutcomeUnknown():
		why := WhyUnknown + " (it keeps its reference: a run looks it up by that reference before sending anything)"
		if outcome.Stuck(p) {
			why += "; " + outcome.StuckMessage(p.Ref, p.Attempts)
		}
		return retryRow{values: payoutValues(p, p.Ref), why: why}, true, nil
	case p.State == ledger.Ready:
		return retryRow{values: payoutValues(p, p.Ref), why: outcome.Words(ledger.Ready) + ": nothing was created at the service for it"}, true, nil
	}
	// Any other state (REJECTED) is said with its last error.
	why := string(p.State)
	if p.LastError != "" {
		why += ": " + p.LastError
	}
	return retryRow{values: payoutValues(p, p.Ref), why: why}, true, nil
}

// maxRetries bounds how many retries of one row are followed.
const maxRetries = 100

// failedRetryRow is the row of a FAILED payout with no retry yet (err is a failed look for one).
// A refusal known to have created nothing is offered under a new reference, recorded first; any
// other FAILED row keeps its reference, which is never sent again, until reconcile confirms it.
func failedRetryRow(ctx context.Context, db Ledger, runID string, p ledger.Payout, now time.Time, err error) (retryRow, bool, error) {
	if err != nil {
		return retryRow{}, false, err
	}
	if !outcome.FailureConfirmed(p) {
		why := "failed, but not yet known to have created nothing: run `payout reconcile` first; " +
			"it keeps its reference, which is never sent again, and the retry file reconcile writes offers it under a new one once confirmed"
		return retryRow{values: payoutValues(p, p.Ref), why: why}, true, nil
	}
	retry, err := db.ClaimRetry(ctx, p.Ref, runID, now, Ref)
	if err != nil {
		return retryRow{}, false, err
	}
	return retryRow{values: payoutValues(p, retry.New), why: failedWhy(p, retry.New)}, true, nil
}

func failedWhy(p ledger.Payout, newRef string) string {
	reason := p.LastError
	if reason == "" {
		reason = "the service reports FAILED"
	}
	return fmt.Sprintf("failed: %s; nothing was paid under %s, so it is offered again under the new reference %s, recorded as a retry of it",
		reason, p.Ref, newRef)
}
