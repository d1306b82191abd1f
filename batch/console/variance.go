package console

import (
	"context"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/ledger"
)

// DefaultAmountShare is how far a known payee's amount may move from what the last paid file of
// the same name paid them before the review page points it out: a fifth.
var DefaultAmountShare = decimal.NewFromFloat(0.2)

// History reads the runs and their lines that a file is compared with (ledger.DB).
type History interface {
	FindRuns(ctx context.Context, f ledger.RunFilter) ([]ledger.Run, error)
	RunLines(ctx context.Context, runID string, how ledger.LineRead, fn func(ledger.ReportLine) error) error
}

// paidPayee is what the last paid file paid one payee.
type paidPayee struct {
	Payee, Account string
	ProviderID     int64
	Amount         decimal.Decimal
}

// change is one thing a reviewer should see before approving.
type change struct {
	Payee, Was, Now string
}

// Changes is what changed since the last paid file of the same name: the fraud a payroll
// clerk's edit can hide among thousands of rows.
type Changes struct {
	Since          ledger.Run // the run compared with; zero when there is none
	NewPayees      []change   // payees it did not pay
	AccountChanged []change   // known payees paid into another account or bank: diversion
	AmountMoved    []change   // known payees whose amount moved by more than Share
	Gone           []change   // payees it paid that this file does not
	Share          decimal.Decimal
}

// Any reports whether anything changed.
func (c Changes) Any() bool {
	return len(c.NewPayees)+len(c.AccountChanged)+len(c.AmountMoved)+len(c.Gone) > 0
}

// payeeKey matches a payee across files: their name, ignoring case and spacing.
func payeeKey(name string) string {
	return strings.Join(strings.Fields(strings.ToLower(name)), " ")
}

// lastPaid finds the latest run of a file of this name (as dropped, before folder mode added a
// time to it), other bytes than fileSHA256, that paid anything, and what it paid each payee.
func lastPaid(ctx context.Context, h History, name, fileSHA256 string) (ledger.Run, map[string]paidPayee, error) {
	runs, err := h.FindRuns(ctx, ledger.RunFilter{Status: ledger.RunFinished})
	if err != nil {
		return ledger.Run{}, nil, err
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].StartedAt.After(runs[j].StartedAt) })
	for _, r := range runs {
		if r.Kind != ledger.KindRun || originalName(filepath.Base(r.File)) != name || r.FileSHA256 == fileSHA256 {
			continue
		}
		paid := map[string]paidPayee{}
		err := h.RunLines(ctx, r.ID, ledger.LineRead{}, func(l ledger.ReportLine) error {
			if p := l.Payout; p != nil && p.State.Accepted() {
				paid[payeeKey(p.Recipient)] = paidPayee{Payee: p.Recipient, ProviderID: p.ProviderID, Account: p.Account, Amount: p.Amount}
			}
			return nil
		})
		if err != nil {
			return r, nil, err
		}
		if len(paid) > 0 {
			return r, paid, nil
		}
	}
	return ledger.Run{}, nil, nil
}

// compare says what rows pay differently from what was paid: new payees, known payees paid into
// another account or bank, amounts moved by more than share, and payees no longer paid.
// banks names the providers for people.
func compare(was map[string]paidPayee, rows []planRow, banks map[int64]string, share decimal.Decimal) Changes {
	bank := func(id int64) string {
		if name := banks[id]; name != "" {
			return name
		}
		return "provider " + strconv.FormatInt(id, 10)
	}
	c := Changes{Share: share}
	now := map[string]bool{}
	for _, r := range rows {
		key := payeeKey(r.Payee)
		now[key] = true
		old, known := was[key]
		switch {
		case !known:
			c.NewPayees = append(c.NewPayees, change{Payee: r.Payee, Now: r.Bank + " " + r.Account + " MYR " + money(r.Amount)})
			continue
		case old.Account != r.Account || old.ProviderID != r.ProviderID:
			c.AccountChanged = append(c.AccountChanged, change{Payee: r.Payee, Was: bank(old.ProviderID) + " " + old.Account, Now: r.Bank + " " + r.Account})
		}
		if old.Amount.IsPositive() && r.Amount.Sub(old.Amount).Abs().GreaterThan(old.Amount.Mul(share)) {
			c.AmountMoved = append(c.AmountMoved, change{Payee: r.Payee, Was: "MYR " + money(old.Amount), Now: "MYR " + money(r.Amount)})
		}
	}
	for key, old := range was {
		if !now[key] {
			c.Gone = append(c.Gone, change{Payee: old.Payee, Was: bank(old.ProviderID) + " " + old.Account + " MYR " + money(old.Amount)})
		}
	}
	sort.Slice(c.Gone, func(i, j int) bool { return c.Gone[i].Payee < c.Gone[j].Payee })
	return c
}
