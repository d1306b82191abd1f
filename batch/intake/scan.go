// Package intake turns a file into recorded payouts and a plan: its passes read and validate the
// file a chunk at a time, check each chunk against the ledger (conflicts, retries, repeats), and
// the last one records what the first validated and hands it on to be sent.
package intake

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"strconv"
	"time"

	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/repeats"
	"github.com/payout/payout/ledger"
)

// DefaultChunkRows is how many rows a run checks against the ledger, records and hands to its
// workers at a time: what it holds of a file of any size.
const DefaultChunkRows = 2000

// fileRow is one input row, validated: its payment, or why it is rejected.
type fileRow struct {
	raw     read.Row
	payment read.Payment
	errs    []*read.RowError
	// planned says that the file alone makes the row payable (valid, and its reference once in
	// the file), whatever the ledger then says of it: the row is in the file's plan statement.
	planned bool
}

func (r *fileRow) valid() bool { return len(r.errs) == 0 }

// Ledger is what a pass over a file reads of the ledger: the payouts its rows name, the
// retries they may be, and the payouts they may repeat.
type Ledger interface {
	Lookup(ctx context.Context, refs []string, how ledger.LookupFields) (map[string]ledger.Payout, error)
	Get(ctx context.Context, ref string) (ledger.Payout, error)
	Retries(ctx context.Context, f ledger.RetryFilter) (map[string]ledger.Retry, error)
	repeats.Ledger
}

// fileScan reads a file a chunk at a time. Every pass over a file is one: the survey that
// decides whether it may be paid, the pass that records and sends it, a dry run's reports.
type fileScan struct {
	path  string
	ropts read.Options
	vopts read.ValidateOptions
	db    Ledger // nil: rows are not checked against a ledger
	// planText says that the survey keeps the plan statement's text (the ledger's policy asks
	// for signatures, or the plan is asked for): one line a row, held until the run checks them.
	planText bool
	// hash says that the pass also sums the bytes it reads its rows from (scanned.sum).
	hash bool
	// sends says that the pass hands the chunk's payouts on to be sent or looked up, so it reads
	// them whole; the other passes read only what checking a row needs (ledger.CheckFields).
	sends bool
	chunk int
	// dups rejects, by line, the rows of references the file has more than once: found at the
	// end of a pass, they are known to the passes after it.
	dups map[int]*read.RowError
	// repeats holds, by line, the rows that repeat an earlier row of the file (see read.Findings).
	repeats map[int]*read.RowError
	seed    maphash.Seed
	rules   repeats.Policy
	now     func() time.Time
	zone    *time.Location // the operator's: the day a hold names is theirs
	guard   *repeats.Guard // made at its first use (repeatGuard)
}

// Options says how a file is read, validated and checked against the ledger.
type Options struct {
	Path     string
	Read     read.Options
	Validate read.ValidateOptions
	// Ledger, when set, is what the rows are checked against.
	Ledger    Ledger
	ChunkRows int
	Repeats   repeats.Policy
	Now       func() time.Time
	// Zone is the operator's: the day a hold names is theirs.
	Zone *time.Location
	// PlanText keeps the plan statement's text: the ledger's policy asks for signatures, or the
	// plan is asked for.
	PlanText bool
}

// newScan is the scan of the file o names.
func newScan(o Options) fileScan {
	return fileScan{path: o.Path, ropts: o.Read, vopts: o.Validate, db: o.Ledger, chunk: o.ChunkRows, seed: maphash.MakeSeed(),
		rules: o.Repeats, now: o.Now, zone: o.Zone, planText: o.PlanText}
}

// scanned is what a pass learned of the whole file.
type scanned struct {
	// sum is the SHA-256 of the file the pass read, through the same open file (fileScan.hash).
	sum    string
	found  read.Findings
	sheet  string
	header []string // the file's column names, in file order
}

// each calls fn with the file's rows a chunk at a time, in line order, with the ledger's payouts of
// the chunk's valid references. A valid row whose reference the ledger holds with other details
// is rejected here (ErrLedgerConflict). fn may keep nothing of rows past its return.
func (s *fileScan) each(ctx context.Context, fn func(rows []fileRow, existing map[string]ledger.Payout) error) (scanned, error) {
	var rd read.Reader
	var sum string
	var err error
	if s.hash {
		rd, sum, err = read.OpenFileHashed(s.path, s.ropts)
	} else {
		rd, err = read.OpenFile(s.path, s.ropts)
	}
	if err != nil {
		return scanned{}, err
	}
	defer rd.Close()
	if err := s.readRecentPayees(ctx); err != nil {
		return scanned{}, err
	}
	v := read.NewValidator(s.vopts)
	stop := make(chan struct{})
	chunks := s.readAhead(rd, v, stop)
	defer func() {
		close(stop)
		for range chunks {
			// Once it closes chunks, the reader is done with rd.
		}
	}()
	for c := range chunks {
		if c.err != nil && !errors.Is(c.err, io.EOF) {
			return scanned{}, c.err
		}
		if len(c.rows) > 0 {
			existing, err := s.checkLedger(ctx, c.rows)
			if err != nil {
				return scanned{}, err
			}
			if err := fn(c.rows, existing); err != nil {
				return scanned{}, err
			}
		}
		if c.err != nil {
			break
		}
	}
	return scanned{sum: sum, found: v.Finish(), sheet: rd.Sheet(), header: read.Header(rd)}, nil
}

// readChunk is up to a chunk of rows as read and validated; err is io.EOF with the last rows of
// the file, or why the file could not be read on (the rows read before it are not to be used).
type readChunk struct {
	rows []fileRow
	err  error
}

// readAhead reads and validates the file's rows on a goroutine of its own, a chunk ahead of the
// caller, who checks the chunk before against the ledger meanwhile: the two take about as long.
// It hands over its two buffers in turn: it refills one only after the caller has taken the
// chunk after it, that is, once the caller is done with it. It stops when stop closes, and
// closes the channel when it is done with rd and v.
func (s *fileScan) readAhead(rd read.Reader, v *read.Validator, stop <-chan struct{}) <-chan readChunk {
	chunks := make(chan readChunk)
	go func() {
		defer close(chunks)
		bufs := [2][]fileRow{make([]fileRow, 0, s.chunk), make([]fileRow, 0, s.chunk)}
		for turn := 0; ; turn = 1 - turn {
			select {
			case <-stop:
				// Taken first: a caller that drains chunks after stopping gets at most one more.
				return
			default:
			}
			c := s.readChunk(rd, v, bufs[turn][:0])
			select {
			case chunks <- c:
			case <-stop:
				return
			}
			if c.err != nil {
				return
			}
		}
	}()
	return chunks
}

// readChunk reads and validates the file's next rows into rows, up to a chunk of them.
func (s *fileScan) readChunk(rd read.Reader, v *read.Validator, rows []fileRow) readChunk {
	for len(rows) < s.chunk {
		raw, err := rd.Next()
		if err != nil {
			return readChunk{rows: rows, err: err}
		}
		payment, errs := v.Check(raw)
		_, dup := s.dups[raw.Line]
		planned := len(errs) == 0 && !dup
		if dup, ok := s.dups[raw.Line]; ok {
			// A duplicate's error goes first, where the reference's own would.
			d := *dup
			d.Value = raw.Ref
			errs = append([]*read.RowError{&d}, errs...)
		} else if rep, ok := s.repeats[raw.Line]; ok && len(errs) == 0 && !s.rules.Allows(payment.Ref) {
			d := *rep
			d.Value = raw.Account
			d.Err = fmt.Errorf("%w; %s", rep.Err, s.rules.Hint(payment.Ref))
			errs = append(errs, &d)
		}
		rows = append(rows, fileRow{raw: raw, payment: payment, errs: errs, planned: planned})
	}
	return readChunk{rows: rows}
}

// checkLedger looks the chunk's valid references up in the ledger and rejects the rows it holds
// with other details: paying them would pay twice, or pay the wrong account or amount.
func (s *fileScan) checkLedger(ctx context.Context, rows []fileRow) (map[string]ledger.Payout, error) {
	if s.db == nil {
		return nil, nil
	}
	refs := make([]string, 0, len(rows))
	for i := range rows {
		if rows[i].valid() {
			refs = append(refs, rows[i].payment.Ref)
		}
	}
	existing, err := s.db.Lookup(ctx, refs, ledger.CheckFields)
	if err != nil {
		return nil, err
	}
	if s.sends {
		if err := s.readWhole(ctx, existing); err != nil {
			return nil, err
		}
	}
	for i := range rows {
		row := &rows[i]
		if !row.valid() {
			continue
		}
		old, ok := existing[row.payment.Ref]
		if !ok || old.SameDetails(toLedgerPayout(row.payment, "")) {
			continue
		}
		row.errs = append(row.errs, &read.RowError{Line: row.raw.Line, Column: read.ColRef, Value: row.payment.Ref,
			Err: fmt.Errorf("%w: run %s line %d has it for %s MYR to account %s at provider %d; use a new reference",
				ErrLedgerConflict, old.RunID, old.Line, old.Amount.StringFixed(2), outcome.MaskAccount(old.Account), old.ProviderID)})
	}
	if err := checkRetries(ctx, s.db, rows, existing); err != nil {
		return nil, err
	}
	return existing, s.holdRepeats(ctx, rows, existing)
}

// readWhole reads again, whole, the payouts of existing that the pass hands on to be sent or looked
// up (outcome.Unfinished): the others need nothing more, and a rerun of a paid file holds little
// else.
func (s *fileScan) readWhole(ctx context.Context, existing map[string]ledger.Payout) error {
	var refs []string
	for ref, p := range existing {
		if outcome.Unfinished(p) {
			refs = append(refs, ref)
		}
	}
	if len(refs) == 0 {
		return nil
	}
	whole, err := s.db.Lookup(ctx, refs, ledger.WholePayouts)
	for ref, p := range whole {
		existing[ref] = p
	}
	return err
}

// withDuplicates returns a scan that rejects the duplicates, and holds the repeats, that a pass
// found, and whether there are any.
func (s fileScan) withDuplicates(found read.Findings) (fileScan, bool) {
	repeats := found.Repeats
	if s.rules.AllowAll {
		repeats = nil
	}
	if len(found.Duplicates) == 0 && len(repeats) == 0 {
		return s, false
	}
	s.dups = make(map[int]*read.RowError, len(found.Duplicates))
	for _, d := range found.Duplicates {
		s.dups[d.Line] = d
	}
	s.repeats = make(map[int]*read.RowError, len(repeats))
	for _, d := range repeats {
		s.repeats[d.Line] = d
	}
	return s, true
}

// digest sums up a chunk's rows as read (not the ledger's verdicts, which a callback may change
// between passes), so that a later pass can tell that the file changed
// under it before it records or sends anything of a changed chunk.
func (s *fileScan) digest(rows []fileRow) uint64 {
	var h maphash.Hash
	h.SetSeed(s.seed)
	for i := range rows {
		r := &rows[i].raw
		h.WriteString(strconv.Itoa(r.Line))
		for _, f := range []string{r.Ref, r.Recipient, r.Bank, r.ServiceID, r.Account, r.Amount, r.Description} {
			h.WriteString(strconv.Itoa(len(f)))
			h.WriteByte(':')
			h.WriteString(f)
		}
	}
	return h.Sum64()
}

// ErrFileChanged stops a run whose input changed between the passes that read it.
var ErrFileChanged = errors.New("the input file changed while the run read it")

// Source names the input a run read, for ledger.Run.Source: its bytes, and the sheet of a workbook.
func Source(sum, sheet string) string {
	if sheet == "" {
		return sum
	}
	return sum + "#sheet=" + sheet
}

func toLedgerPayout(p read.Payment, runID string) ledger.Payout {
	return ledger.Payout{Ref: p.Ref, RunID: runID, Line: p.Line, Recipient: p.Recipient, ProviderID: p.ProviderID,
		Bank: p.Bank, Account: p.Account, Amount: p.Amount, Description: p.Description, State: ledger.Ready}
}

func joinRowErrors(errs []*read.RowError) string {
	msg := ""
	for i, e := range errs {
		if i > 0 {
			msg += "; "
		}
		msg += e.Column + ": " + e.Err.Error()
		if e.Value != "" {
			msg += fmt.Sprintf(" (value %q)", e.Value)
		}
	}
	return msg
}

// ErrLedgerConflict rejects a row whose reference the ledger already holds with other details:
// paying it would either pay twice or pay the wrong account or amount.
var ErrLedgerConflict = errors.New("reference already in the ledger with other details")
