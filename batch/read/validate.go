package read

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/words"
)

// Limits on text fields. The service shows none; 140 characters fits a bank statement line.
const (
	MaxRefLength         = 64
	MaxRecipientLength   = 140
	MaxDescriptionLength = 140
)

// Reasons a row or a file is rejected.
var (
	ErrRefMissing       = errors.New("reference missing")
	ErrRefDuplicate     = errors.New("reference appears more than once in the file")
	ErrRefFormat        = errors.New(`reference may hold only letters, digits and - _ . : (1 to 64 characters, not "." or ".." alone): it is looked up as one part of a URL`)
	ErrBankMissing      = errors.New("bank or payout_service_id missing")
	ErrBankUnknown      = errors.New("unknown bank")
	ErrBankConflict     = errors.New("bank and payout_service_id name different providers")
	ErrRecipientMissing = errors.New("recipient_reference missing")
	ErrRecipientFormat  = errors.New("recipient_reference too long or holds control characters")
	ErrDescription      = errors.New("payment_description too long or holds control characters")
	ErrNoRows           = errors.New("no data rows: the file has a header and nothing to pay")
	// ErrPossibleRepeat holds a row that pays the same account at the same bank the same amount
	// as another row, under another reference: the same invoice entered twice, or a file
	// exported twice, looks exactly like this.
	ErrPossibleRepeat = errors.New("held as a possible repeat: same account, bank and amount")
)

// Payment is a validated row, ready to pay.
type Payment struct {
	Line        int
	Ref         string
	Recipient   string
	ProviderID  int64
	Bank        string // the provider's name as listed
	Account     string // digits only
	Amount      decimal.Decimal
	Description string
}

// RowError says why one input row was rejected. Line is the 1-based line or spreadsheet row; 0
// for a file-level error.
type RowError struct {
	Line   int
	Column string
	Value  string
	Err    error
}

// Error reads "line 7: amount \"1,25\": reason".
func (e *RowError) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Column != "" && e.Column != WholeRow {
		b.WriteString(e.Column)
		if e.Value != "" {
			fmt.Fprintf(&b, " %q", e.Value)
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap gives the reason.
func (e *RowError) Unwrap() error { return e.Err }

// ValidateOptions are the rules a file is checked against.
type ValidateOptions struct {
	Providers          []api.Provider
	DefaultDescription string
	MaxAmount          decimal.Decimal // per row; zero means no limit
	MaxTotal           decimal.Decimal // per file; zero means no limit
	MaxRows            int
}

// Validator checks rows one by one and never stops at an error. Every reference is remembered
// with its first line, so that Finish can reject each row of a reference the file has twice.
type Validator struct {
	opts ValidateOptions
	idx  *providerIndex
	refs dupFinder
	// payees finds rows that pay the same account, bank and amount (see ErrPossibleRepeat).
	payees dupFinder
	banks  map[string]bankResult
	total  Total
	rows   int
	// removed is what the rows of duplicated references had added to the total, known at Finish.
	removed decimal.Decimal
}

// NewValidator prepares the checks.
func NewValidator(opts ValidateOptions) *Validator {
	return &Validator{opts: opts, idx: newProviderIndex(opts.Providers), banks: make(map[string]bankResult)}
}

// Check validates one row. Every problem of the row itself is returned; the Payment is
// meaningful only when there are none. A reference that appears again is found by Finish.
func (v *Validator) Check(r Row) (Payment, []*RowError) {
	v.rows++
	var errs []*RowError
	add := func(col, val string, err error) {
		errs = append(errs, &RowError{Line: r.Line, Column: col, Value: val, Err: err})
	}
	p := Payment{Line: r.Line}
	if len(r.Problems) > 0 {
		errs = append(errs, r.Problems...)
		if shifted(r.Problems) {
			// The fields are not where the header says: checking them would only add noise.
			return Payment{}, errs
		}
	}
	checked := func(col string) bool { return !hasProblem(r.Problems, col) }

	p.Ref = strings.TrimSpace(words.Unneutralize(r.Ref))
	switch {
	case !checked(ColRef):
	case p.Ref == "":
		add(ColRef, r.Ref, ErrRefMissing)
	case !validRef(p.Ref):
		add(ColRef, r.Ref, ErrRefFormat)
	}

	p.Recipient = strings.TrimSpace(words.Unneutralize(r.Recipient))
	switch {
	case !checked(ColRecipient):
	case p.Recipient == "":
		add(ColRecipient, r.Recipient, ErrRecipientMissing)
	case !validText(p.Recipient, MaxRecipientLength):
		add(ColRecipient, r.Recipient, fmt.Errorf("%w: %s", ErrRecipientFormat, textProblem(p.Recipient, MaxRecipientLength)))
	}

	if checked(ColBank) && checked(ColServiceID) {
		if prov, col, val, err := v.resolve(r); err != nil {
			add(col, val, err)
		} else {
			p.ProviderID, p.Bank = prov.ID, prov.Name
		}
	}

	if checked(ColAccount) {
		if acct, err := NormalizeAccount(r.Account); err != nil {
			add(ColAccount, r.Account, err)
		} else {
			p.Account = acct
		}
	}

	if checked(ColAmount) {
		if amt, err := v.amount(r.Amount); err != nil {
			add(ColAmount, r.Amount, err)
		} else {
			p.Amount = amt
		}
	}

	p.Description = strings.TrimSpace(words.Unneutralize(r.Description))
	if p.Description == "" {
		p.Description = v.opts.DefaultDescription
	}
	if checked(ColDescription) && !validText(p.Description, MaxDescriptionLength) {
		add(ColDescription, r.Description, fmt.Errorf("%w: %s", ErrDescription, textProblem(p.Description, MaxDescriptionLength)))
	}

	var cents int64
	if len(errs) == 0 {
		cents = v.total.Add(p.Amount)
		// Accounts that differ only in leading zeros (a spreadsheet drops them) are one payee.
		v.payees.addPayee(strings.TrimLeft(p.Account, "0"), p.ProviderID, cents, r.Line)
	}
	if p.Ref != "" && validRef(p.Ref) {
		v.refs.add(p.Ref, r.Line, cents)
	}
	if len(errs) > 0 {
		return Payment{}, errs
	}
	return p, nil
}

// amount parses an amount and holds it to --max-amount.
func (v *Validator) amount(s string) (decimal.Decimal, error) {
	amt, err := ParseAmount(s)
	if err == nil && v.opts.MaxAmount.IsPositive() && amt.GreaterThan(v.opts.MaxAmount) {
		err = fmt.Errorf("%w: over --max-amount %s", ErrAmountTooLarge, v.opts.MaxAmount.StringFixed(2))
	}
	return amt, err
}

// shifted tells whether the reader found the row's fields out of place (more or fewer than the
// header has).
func shifted(problems []*RowError) bool {
	for _, p := range problems {
		if errors.Is(p.Err, ErrFieldCount) {
			return true
		}
	}
	return false
}

// hasProblem tells whether the reader already rejected the row's value in column col.
func hasProblem(problems []*RowError, col string) bool {
	for _, p := range problems {
		if p.Column == col {
			return true
		}
	}
	return false
}

// Findings is what only the whole file can tell.
type Findings struct {
	// Duplicates rejects, in line order, every row whose reference appears more than once in the
	// file (ErrRefDuplicate, naming another line that has it). Value is left to the caller, which
	// has the cell as the file wrote it. These rows are out of Total.
	Duplicates []*RowError
	// Repeats holds, in line order, every valid row that pays the account, bank and amount of an
	// earlier row of the file (ErrPossibleRepeat, naming the first such line).
	Repeats []*RowError
	// File is what is wrong with the file as a whole (ErrNoRows, ErrTooManyRows,
	// ErrTotalTooLarge), with Line 0.
	File []*RowError
}

// Finish reports the rows of duplicated references and checks the file-level rules, the total
// without those rows.
func (v *Validator) Finish() Findings {
	var f Findings
	dups, removed := v.refs.find()
	v.removed = removed
	for _, d := range dups {
		f.Duplicates = append(f.Duplicates, &RowError{Line: d.line, Column: ColRef,
			Err: fmt.Errorf("%w: lines %d and %d", ErrRefDuplicate, min(d.line, d.other), max(d.line, d.other))})
	}
	repeats, _ := v.payees.find()
	for _, d := range repeats {
		if d.line > d.other {
			f.Repeats = append(f.Repeats, &RowError{Line: d.line, Column: ColAccount,
				Err: fmt.Errorf("%w as line %d, under another reference", ErrPossibleRepeat, d.other)})
		}
	}
	f.File = v.fileErrors()
	return f
}

func (v *Validator) fileErrors() []*RowError {
	var errs []*RowError
	if v.rows == 0 {
		errs = append(errs, &RowError{Err: ErrNoRows})
	}
	if v.opts.MaxRows > 0 && v.rows > v.opts.MaxRows {
		errs = append(errs, &RowError{Err: fmt.Errorf("%w: %d, limit %d", ErrTooManyRows, v.rows, v.opts.MaxRows)})
	}
	if total := v.Total(); v.opts.MaxTotal.IsPositive() && total.GreaterThan(v.opts.MaxTotal) {
		errs = append(errs, &RowError{Column: ColAmount, Err: fmt.Errorf("%w: %s MYR, --max-total %s",
			ErrTotalTooLarge, total.StringFixed(2), v.opts.MaxTotal.StringFixed(2))})
	}
	return errs
}

// Total is the sum of the valid rows so far; after Finish, without the rows of duplicated references.
func (v *Validator) Total() decimal.Decimal {
	return v.total.Decimal().Sub(v.removed)
}

// validRef accepts a reference that travels unchanged as one segment of a URL path, since a
// payout whose answer was lost is looked up by it: ASCII letters and digits and - _ . : (all
// allowed unescaped in a path segment), and neither "." nor ".." (which a path resolves away).
func validRef(s string) bool {
	if len(s) > MaxRefLength || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

func (v *Validator) resolve(r Row) (api.Provider, string, string, error) {
	name, id := strings.TrimSpace(r.Bank), strings.TrimSpace(r.ServiceID)
	var byName, byID api.Provider
	if name != "" {
		// A payroll names a handful of banks a million times: resolve each spelling once.
		res, ok := v.banks[name]
		if !ok {
			res.p, res.err = v.idx.resolve(name)
			if len(v.banks) < maxBankCache {
				v.banks[name] = res
			}
		}
		if res.err != nil {
			return res.p, ColBank, r.Bank, res.err
		}
		byName = res.p
	}
	if id != "" {
		n, perr := strconv.ParseInt(id, 10, 64)
		p, ok := v.idx.byID[n]
		if perr != nil || !ok {
			return byID, ColServiceID, r.ServiceID, fmt.Errorf("%w: no provider with payout_service_id %s (see `payout providers`)", ErrBankUnknown, id)
		}
		byID = p
	}
	switch {
	case name == "" && id == "":
		return api.Provider{}, ColBank, "", ErrBankMissing
	case name != "" && id != "" && byName.ID != byID.ID:
		return api.Provider{}, ColServiceID, r.ServiceID, fmt.Errorf("%w: %q is provider %d", ErrBankConflict, r.Bank, byName.ID)
	case name != "":
		return byName, "", "", nil
	}
	return byID, "", "", nil
}

type bankResult struct {
	p   api.Provider
	err error
}

const maxBankCache = 4096
