package repeats

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/words"
	"github.com/payout/payout/ledger"
)

// DefaultWindow is how far back a row is compared with the ledger's payouts. Six days catch a
// file paid twice in one week, or last week's file exported again within days, and never hold a
// weekly payroll, which pays the same people the same amounts every seven days.
const DefaultWindow = 6 * 24 * time.Hour

// Policy says which rows are held as possible repeats: a row new to the ledger that pays the
// account, bank and amount of a payout recorded within Window under another reference, or of an
// earlier row of the same file. A held row is not sent; like a rejected row, it stops the file
// unless --allow-partial.
type Policy struct {
	Window   time.Duration // DefaultWindow when 0
	AllowAll bool          // --allow-repeats: hold nothing
	Allow    map[string]bool
}

// Allows reports whether the row of reference ref is paid even if it repeats another.
func (p Policy) Allows(ref string) bool { return p.AllowAll || p.Allow[ref] }

func (p Policy) window() time.Duration {
	if p.Window <= 0 {
		return DefaultWindow
	}
	return p.Window
}

// Hint says how to pay a held row all the same.
func (p Policy) Hint(ref string) string {
	return fmt.Sprintf("not sent%s --allow-repeat %s (or --allow-repeats for the whole file)", hintLead, ref)
}

// hintLead opens the part of Hint that speaks to someone at a command line.
const hintLead = "; if it is meant, run again with"

// WithoutHint is a held row's message without what Hint says to someone at a command line: folder
// mode, where nobody runs one, says instead how signers accept the row.
func WithoutHint(msg string) string {
	if i := strings.Index(msg, hintLead); i >= 0 {
		return msg[:i]
	}
	return msg
}

// Row is a valid row new to the ledger, as a Guard compares it: its line, reference, payee and
// amount, and its account as the file wrote it.
type Row struct {
	Line       int
	Ref        string
	Account    string
	RawAccount string
	ProviderID int64
	Amount     decimal.Decimal
}

// Guard compares a file's rows with what the ledger paid within the policy's window, for one
// pass over the file at a time.
type Guard struct {
	db     Ledger
	policy Policy
	now    func() time.Time
	zone   *time.Location        // the operator's: the day a hold names is theirs
	runs   map[string]ledger.Run // runs named by the holds, read once
	// recent, when not nil, holds every account paid within the window (ReadRecent).
	recent ledger.RecentPayees
}

// Ledger is what a Guard reads: the payouts to an account, bank and amount within the window,
// and the runs that paid them.
type Ledger interface {
	RecentPayees(ctx context.Context, since time.Time, limit int) (ledger.RecentPayees, error)
	RecentPayouts(ctx context.Context, payees []ledger.Payee, since time.Time) (map[string]ledger.Payout, error)
	GetRun(ctx context.Context, id string) (ledger.Run, error)
}

// NewGuard is a guard over db's payouts for policy; now tells the time, zone is the operator's.
func NewGuard(db Ledger, policy Policy, now func() time.Time, zone *time.Location) *Guard {
	return &Guard{db: db, policy: policy, now: now, zone: zone}
}

// ReadRecent reads, for a pass that sends nothing, the accounts the ledger paid within the
// window when it paid no more than limit payouts: a big file is then checked for repeats in
// memory, and only a row whose account was paid is looked up. A pass that records and sends
// calls it with read false, and looks every row up as of the moment it records it.
func (g *Guard) ReadRecent(ctx context.Context, limit int, read bool) error {
	g.recent = nil
	if !read || g.policy.AllowAll {
		return nil
	}
	var err error
	g.recent, err = g.db.RecentPayees(ctx, g.now().Add(-g.policy.window()), limit)
	return err
}

// Hold returns, by line, why each row that pays the account, bank and amount of a payout the
// ledger recorded within the window under another reference is held. Accounts that differ only
// in leading zeros count as the same (ledger.AccountDigits).
func (g *Guard) Hold(ctx context.Context, rows []Row) (map[int]*read.RowError, error) {
	if g.policy.AllowAll {
		return nil, nil
	}
	var payees []ledger.Payee
	for _, r := range rows {
		if g.policy.Allows(r.Ref) {
			continue
		}
		// Only a payee whose account and bank were paid may repeat a recent payout.
		if g.recent == nil || g.recent[ledger.PaidAccount{Digits: ledger.AccountDigits(r.Account), ProviderID: r.ProviderID}] {
			payees = append(payees, ledger.Payee{Ref: r.Ref, Account: r.Account, ProviderID: r.ProviderID, Amount: r.Amount})
		}
	}
	if len(payees) == 0 {
		return nil, nil
	}
	earlier, err := g.db.RecentPayouts(ctx, payees, g.now().Add(-g.policy.window()))
	if err != nil || len(earlier) == 0 {
		return nil, err
	}
	held := make(map[int]*read.RowError)
	for _, r := range rows {
		old, ok := earlier[r.Ref]
		if !ok {
			continue
		}
		run, err := g.run(ctx, old.RunID)
		if err != nil {
			return nil, err
		}
		zeros := ""
		if old.Account != r.Account {
			zeros = fmt.Sprintf(" (account %s there, %s here: they differ only in leading zeros, which a spreadsheet may have dropped)",
				old.Account, r.Account)
		}
		held[r.Line] = &read.RowError{Line: r.Line, Column: read.ColAccount, Value: r.RawAccount,
			Err: fmt.Errorf("%w as %s%s, recorded by run %s from %s on %s; %s", read.ErrPossibleRepeat, old.Ref, zeros, old.RunID,
				filepath.Base(run.File), words.FormatDay(old.CreatedAt, g.zone), g.policy.Hint(r.Ref))}
	}
	return held, nil
}

func (g *Guard) run(ctx context.Context, id string) (ledger.Run, error) {
	if run, ok := g.runs[id]; ok {
		return run, nil
	}
	run, err := g.db.GetRun(ctx, id)
	if err != nil {
		return run, err
	}
	if g.runs == nil {
		g.runs = make(map[string]ledger.Run)
	}
	g.runs[id] = run
	return run, nil
}
