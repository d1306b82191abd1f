package read_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch/read"
	"github.com/shopspring/decimal"
)

func TestParseAmount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string
		err  error
	}{
		{"1250", "1250", nil},
		{"1250.5", "1250.5", nil},
		{" 1,250.00 ", "1250", nil},
		{"RM1,250.50", "1250.5", nil},
		{"rm 12.50", "12.5", nil},
		{"MYR 1,000,000.01", "1000000.01", nil},
		{"myr0.01", "0.01", nil},
		{".5", "0.5", nil},
		{"007.10", "7.1", nil},
		{"1.250,00", "", read.ErrAmountFormat},
		{"1,25", "", read.ErrAmountFormat},
		{"12,50.00", "", read.ErrAmountFormat},
		{"1,2500", "", read.ErrAmountFormat},
		{",250", "", read.ErrAmountFormat},
		{"one hundred", "", read.ErrAmountFormat},
		{"100 ringgit", "", read.ErrAmountFormat},
		{"1e3", "", read.ErrAmountFormat},
		{"+100", "", read.ErrAmountFormat},
		{"", "", read.ErrAmountFormat},
		{"RM", "", read.ErrAmountFormat},
		{".", "", read.ErrAmountFormat},
		{"1.2.3", "", read.ErrAmountFormat},
		{"-100", "", read.ErrAmountNotPositive},
		{"RM -5.00", "", read.ErrAmountNotPositive},
		{"(50.00)", "", read.ErrAmountNotPositive},
		{"50.00)", "", read.ErrAmountNotPositive},
		{"0", "", read.ErrAmountNotPositive},
		{"0.00", "", read.ErrAmountNotPositive},
		{"10.001", "", read.ErrAmountPrecision},
		{"1.500", "", read.ErrAmountPrecision},
		{"1000000000000", "", read.ErrAmountTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := read.ParseAmount(tt.in)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("ParseAmount(%q) = %v, %v; want %v", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || !got.Equal(decimal.RequireFromString(tt.want)) {
				t.Fatalf("ParseAmount(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestNormalizeAccount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string
		err  error
	}{
		{"0123456789", "0123456789", nil},
		{" 0123-456 789 ", "0123456789", nil},
		{"123456", "123456", nil},
		{"12345678901234567890", "12345678901234567890", nil},
		{"12345", "", read.ErrAccountFormat},
		{"123456789012345678901", "", read.ErrAccountFormat},
		{"ACC123456", "", read.ErrAccountFormat},
		{"123456.0", "", read.ErrAccountFormat},
		{"", "", read.ErrAccountFormat},
		{"1.23457E+11", "", read.ErrAccountScientific},
		{"1.23457e11", "", read.ErrAccountScientific},
		{"12345E+6", "", read.ErrAccountScientific},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := read.NormalizeAccount(tt.in)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("NormalizeAccount(%q) = %q, %v; want %v", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("NormalizeAccount(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestResolveProvider(t *testing.T) {
	t.Parallel()
	providers := sandbox.DefaultProviders()
	tests := []struct {
		name    string
		wantID  int64
		suggest string
	}{
		{"Maybank", 1, ""},
		{"Malayan Banking Berhad", 1, ""},
		{"MAYBANK (MALAYAN BANKING BERHAD)", 1, ""},
		{"malayan banking bhd", 1, ""},
		{"CIMB Bank Berhad", 2, ""},
		{"cimb-bank", 2, ""},
		{"Public Bank Bhd.", 3, ""},
		{"RHB Bank", 4, ""},
		{"Hong Leong Bank", 5, ""},
		{"AmBank (M) Berhad", 6, ""},
		{"ambank", 6, ""},
		{"Bank Islam Malaysia Berhad", 7, ""},
		{"Bank Islam", 7, ""},
		{"Touch 'n Go eWallet", 51, ""},
		{"Touch n Go eWallet", 51, ""},
		{"Touch \u2019n Go eWallet", 51, ""},
		{"Maybnk", 0, "Maybank (Malayan Banking Berhad)"},
		{"Public Bnak", 0, "Public Bank Berhad"},
		{"Touch n Go", 0, `did you mean "Touch 'n Go eWallet"? (see`},
		{"TNG eWallet", 0, `did you mean "Touch 'n Go eWallet"? (see`},
		{"", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := read.ResolveProvider(providers, tt.name)
			if tt.wantID == 0 {
				if !errors.Is(err, read.ErrBankUnknown) || !strings.Contains(err.Error(), tt.suggest) {
					t.Fatalf("ResolveProvider(%q) = %+v, %v; want ErrBankUnknown suggesting %q", tt.name, got, err, tt.suggest)
				}
				return
			}
			if err != nil || got.ID != tt.wantID {
				t.Fatalf("ResolveProvider(%q) = %+v, %v; want id %d", tt.name, got, err, tt.wantID)
			}
		})
	}
}

func TestResolveProviderAmbiguousName(t *testing.T) {
	t.Parallel()
	providers := []api.Provider{{ID: 1, Name: "Example Bank Berhad"}, {ID: 2, Name: "Example Bank (Malaysia) Bhd"}}
	if _, err := read.ResolveProvider(providers, "Example Bank"); !errors.Is(err, read.ErrBankUnknown) || !strings.Contains(err.Error(), "more than one") {
		t.Fatalf("err = %v, want an ambiguity error", err)
	}
}

func goodRow(line int, ref string) read.Row {
	return read.Row{Line: line, Ref: ref, Recipient: "Tan Wei Ming", Bank: "Maybank", Account: "0123456789", Amount: "100.00"}
}

func TestValidatorRows(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 141)
	tests := []struct {
		name   string
		edit   func(*read.Row)
		opts   read.ValidateOptions
		column string
		err    error
	}{
		{name: "bank by id", edit: func(r *read.Row) { r.Bank, r.ServiceID = "", "51" }},
		{name: "bank and matching id", edit: func(r *read.Row) { r.ServiceID = "1" }},
		{name: "bank and other id", edit: func(r *read.Row) { r.ServiceID = "2" }, column: read.ColServiceID, err: read.ErrBankConflict},
		{name: "unknown id", edit: func(r *read.Row) { r.Bank, r.ServiceID = "", "999" }, column: read.ColServiceID, err: read.ErrBankUnknown},
		{name: "id not a number", edit: func(r *read.Row) { r.Bank, r.ServiceID = "", "one" }, column: read.ColServiceID, err: read.ErrBankUnknown},
		{name: "no bank", edit: func(r *read.Row) { r.Bank = "" }, column: read.ColBank, err: read.ErrBankMissing},
		{name: "ref too long", edit: func(r *read.Row) { r.Ref = strings.Repeat("A", 65) }, column: read.ColRef, err: read.ErrRefFormat},
		{name: "ref 64 characters", edit: func(r *read.Row) { r.Ref = strings.Repeat("A", 64) }},
		{name: "ref with dot, colon, underscore and dash", edit: func(r *read.Row) { r.Ref = "2026:11.PAY_1.a-b" }},
		{name: "ref with slash", edit: func(r *read.Row) { r.Ref = "DEPT/2026/4" }, column: read.ColRef, err: read.ErrRefFormat},
		{name: "ref with backslash", edit: func(r *read.Row) { r.Ref = `DEPT\4` }, column: read.ColRef, err: read.ErrRefFormat},
		{name: "ref with question mark", edit: func(r *read.Row) { r.Ref = "PAY?1" }, column: read.ColRef, err: read.ErrRefFormat},
		{name: "ref with hash", edit: func(r *read.Row) { r.Ref = "PAY#1" }, column: read.ColRef, err: read.ErrRefFormat},
		{name: "ref with percent", edit: func(r *read.Row) { r.Ref = "PAY%2F1" }, column: read.ColRef, err: read.ErrRefFormat},
		{name: "ref with tab", edit: func(r *read.Row) { r.Ref = "PAY\t1" }, column: read.ColRef, err: read.ErrRefFormat},
		{name: "ref with non-ASCII letter", edit: func(r *read.Row) { r.Ref = "PAYÉ1" }, column: read.ColRef, err: read.ErrRefFormat},
		{name: "ref dot", edit: func(r *read.Row) { r.Ref = "." }, column: read.ColRef, err: read.ErrRefFormat},
		{name: "ref dot dot", edit: func(r *read.Row) { r.Ref = ".." }, column: read.ColRef, err: read.ErrRefFormat},
		{name: "ref three dots", edit: func(r *read.Row) { r.Ref = "..." }},
		{name: "ref with space", edit: func(r *read.Row) { r.Ref = "PAY 1" }, column: read.ColRef, err: read.ErrRefFormat},
		{name: "recipient too long", edit: func(r *read.Row) { r.Recipient = long }, column: read.ColRecipient, err: read.ErrRecipientFormat},
		{name: "recipient blank", edit: func(r *read.Row) { r.Recipient = "  " }, column: read.ColRecipient, err: read.ErrRecipientMissing},
		{name: "description too long", edit: func(r *read.Row) { r.Description = long }, column: read.ColDescription, err: read.ErrDescription},
		{name: "description newline", edit: func(r *read.Row) { r.Description = "a\nb" }, column: read.ColDescription, err: read.ErrDescription},
		{name: "over max amount", edit: func(r *read.Row) { r.Amount = "100.01" }, opts: read.ValidateOptions{MaxAmount: decimal.NewFromInt(100)}, column: read.ColAmount, err: read.ErrAmountTooLarge},
		{name: "at max amount", opts: read.ValidateOptions{MaxAmount: decimal.NewFromInt(100)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Providers = sandbox.DefaultProviders()
			v := read.NewValidator(tt.opts)
			row := goodRow(2, "PAY-1")
			if tt.edit != nil {
				tt.edit(&row)
			}
			p, errs := v.Check(row)
			if tt.err == nil {
				if len(errs) != 0 || p.ProviderID == 0 || p.Line != 2 {
					t.Fatalf("Check = %+v, %v; want a payment", p, errs)
				}
				return
			}
			if len(errs) != 1 || errs[0].Column != tt.column || !errors.Is(errs[0], tt.err) || errs[0].Line != 2 {
				t.Fatalf("Check errors %v; want one %s error %v on line 2", errs, tt.column, tt.err)
			}
		})
	}
}

func TestValidatorPayment(t *testing.T) {
	t.Parallel()
	v := read.NewValidator(read.ValidateOptions{Providers: sandbox.DefaultProviders(), DefaultDescription: "Salary"})
	p, errs := v.Check(read.Row{Line: 7, Ref: " PAY-7 ", Recipient: " Lim Mei Ling ", Bank: "touch n go ewallet",
		Account: "01-2345 6789", Amount: "RM 1,250.5"})
	want := read.Payment{Line: 7, Ref: "PAY-7", Recipient: "Lim Mei Ling", ProviderID: 51, Bank: "Touch 'n Go eWallet",
		Account: "0123456789", Amount: decimal.RequireFromString("1250.50"), Description: "Salary"}
	if len(errs) != 0 || p.Line != want.Line || p.Ref != want.Ref || p.Recipient != want.Recipient || p.ProviderID != want.ProviderID ||
		p.Bank != want.Bank || p.Account != want.Account || !p.Amount.Equal(want.Amount) || p.Description != want.Description {
		t.Fatalf("Check = %+v, %v; want %+v", p, errs, want)
	}
}

func TestValidatorCollectsEveryErrorOfARow(t *testing.T) {
	t.Parallel()
	v := read.NewValidator(read.ValidateOptions{Providers: sandbox.DefaultProviders()})
	_, errs := v.Check(read.Row{Line: 3, Ref: "", Recipient: "", Bank: "Nobank", Account: "x", Amount: "-1"})
	want := []error{read.ErrRefMissing, read.ErrRecipientMissing, read.ErrBankUnknown, read.ErrAccountFormat, read.ErrAmountNotPositive}
	if len(errs) != len(want) {
		t.Fatalf("errors %v, want %v", errs, want)
	}
	for i, w := range want {
		if !errors.Is(errs[i], w) || errs[i].Line != 3 {
			t.Errorf("error %d = %v, want %v on line 3", i, errs[i], w)
		}
	}
}

func finish(tb testing.TB, v *read.Validator) read.Findings {
	tb.Helper()
	return v.Finish()
}

func TestValidatorFileRules(t *testing.T) {
	t.Parallel()
	t.Run("duplicate names both lines on every row that has it", func(t *testing.T) {
		v := read.NewValidator(read.ValidateOptions{Providers: sandbox.DefaultProviders()})
		for line, ref := range map[int]string{2: "PAY-1", 3: "PAY-2", 9: "PAY-1", 12: " PAY-1 "} {
			if _, errs := v.Check(goodRow(line, ref)); len(errs) != 0 {
				t.Fatalf("line %d: %v", line, errs)
			}
		}
		found := finish(t, v)
		want := []string{"line 2: external_invoice_ref: reference appears more than once in the file: lines 2 and 9",
			"line 9: external_invoice_ref: reference appears more than once in the file: lines 2 and 9",
			"line 12: external_invoice_ref: reference appears more than once in the file: lines 2 and 12"}
		if len(found.Duplicates) != len(want) || len(found.File) != 0 {
			t.Fatalf("findings %v, want %q", found, want)
		}
		for i, w := range want {
			if got := found.Duplicates[i]; got.Error() != w || !errors.Is(got, read.ErrRefDuplicate) {
				t.Errorf("duplicate %d = %q, want %q", i, got, w)
			}
		}
		if !v.Total().Equal(decimal.NewFromInt(100)) {
			t.Errorf("total %v, want 100 (the three rows of PAY-1 are not paid)", v.Total())
		}
	})
	t.Run("total over limit", func(t *testing.T) {
		v := read.NewValidator(read.ValidateOptions{Providers: sandbox.DefaultProviders(), MaxTotal: decimal.RequireFromString("150")})
		v.Check(goodRow(2, "PAY-1"))
		v.Check(goodRow(3, "PAY-2"))
		errs := finish(t, v).File
		if len(errs) != 1 || !errors.Is(errs[0], read.ErrTotalTooLarge) || !strings.Contains(errs[0].Error(), "200.00") {
			t.Fatalf("errors %v", errs)
		}
	})
	t.Run("duplicates are out of the total that --max-total checks", func(t *testing.T) {
		v := read.NewValidator(read.ValidateOptions{Providers: sandbox.DefaultProviders(), MaxTotal: decimal.RequireFromString("150")})
		v.Check(goodRow(2, "PAY-1"))
		v.Check(goodRow(3, "PAY-2"))
		v.Check(goodRow(4, "PAY-2"))
		if found := finish(t, v); len(found.File) != 0 || len(found.Duplicates) != 2 {
			t.Fatalf("findings %v", found)
		}
	})
	t.Run("total at limit", func(t *testing.T) {
		v := read.NewValidator(read.ValidateOptions{Providers: sandbox.DefaultProviders(), MaxTotal: decimal.RequireFromString("200")})
		v.Check(goodRow(2, "PAY-1"))
		v.Check(goodRow(3, "PAY-2"))
		if found := finish(t, v); len(found.File)+len(found.Duplicates) != 0 || !v.Total().Equal(decimal.NewFromInt(200)) {
			t.Fatalf("findings %v, total %v", found, v.Total())
		}
	})
	t.Run("max rows", func(t *testing.T) {
		v := read.NewValidator(read.ValidateOptions{Providers: sandbox.DefaultProviders(), MaxRows: 1})
		v.Check(goodRow(2, "PAY-1"))
		v.Check(goodRow(3, "PAY-2"))
		if errs := finish(t, v).File; len(errs) != 1 || !errors.Is(errs[0], read.ErrTooManyRows) {
			t.Fatalf("errors %v", errs)
		}
	})
	t.Run("no rows", func(t *testing.T) {
		v := read.NewValidator(read.ValidateOptions{})
		if errs := finish(t, v).File; len(errs) != 1 || !errors.Is(errs[0], read.ErrNoRows) {
			t.Fatalf("errors %v", errs)
		}
	})
}

// TestValidatorDuplicatesFarApart checks a long file whose duplicated references are far apart,
// three rows of one, and one row rejected for its amount as well: every row of a duplicated
// reference is rejected, and leaves the total.
func TestValidatorDuplicatesFarApart(t *testing.T) {
	t.Parallel()
	v := read.NewValidator(read.ValidateOptions{Providers: sandbox.DefaultProviders()})
	const rows = 100_000
	dupAt := map[int]string{5: "PAY-40000", 40_002: "PAY-40000", 99_000: "PAY-40000", 7: "PAY-99999", 70_000: "PAY-99999"}
	for line := 2; line < rows+2; line++ {
		ref := fmt.Sprintf("PAY-%d", line)
		if d, ok := dupAt[line]; ok {
			ref = d
		}
		row := goodRow(line, ref)
		if line == 70_000 {
			row.Amount = "abc" // rejected for its amount, and still a duplicate
		}
		v.Check(row)
	}
	found := finish(t, v)
	var got []string
	for _, e := range found.Duplicates {
		got = append(got, e.Error())
	}
	want := []string{
		"line 5: external_invoice_ref: reference appears more than once in the file: lines 5 and 40000",
		"line 7: external_invoice_ref: reference appears more than once in the file: lines 7 and 70000",
		"line 40000: external_invoice_ref: reference appears more than once in the file: lines 5 and 40000",
		"line 40002: external_invoice_ref: reference appears more than once in the file: lines 5 and 40002",
		"line 70000: external_invoice_ref: reference appears more than once in the file: lines 7 and 70000",
		"line 99000: external_invoice_ref: reference appears more than once in the file: lines 5 and 99000",
		"line 99999: external_invoice_ref: reference appears more than once in the file: lines 7 and 99999",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || len(found.File) != 0 {
		t.Fatalf("duplicates:\n%s\nwant:\n%s\nfile errors %v", strings.Join(got, "\n"), strings.Join(want, "\n"), found.File)
	}
	// 100,000 rows of 100 MYR, less the 7 rows of the two duplicated refs (PAY-40000 and
	// PAY-99999 also stand on their own lines); the one rejected for its amount is among them.
	if want := decimal.NewFromInt(100 * (rows - 7)); !v.Total().Equal(want) {
		t.Errorf("total %v, want %v", v.Total(), want)
	}
}

func TestRowErrorText(t *testing.T) {
	t.Parallel()
	e := &read.RowError{Line: 4, Column: "amount", Value: "1,25", Err: read.ErrAmountFormat}
	if got := e.Error(); got != `line 4: amount "1,25": not an amount in MYR` {
		t.Errorf("Error() = %q", got)
	}
}

func TestResolveProviderShortNames(t *testing.T) {
	t.Parallel()
	providers := sandbox.DefaultProviders()
	for name, want := range map[string]string{
		"RHB": "RHB Bank Berhad", "Public": "Public Bank Berhad", "CIMB": "CIMB Bank Berhad",
		"Hong Leong": "Hong Leong Bank Berhad", "Bank Islam": "Bank Islam Malaysia Berhad",
		"maybank berhad": "Maybank (Malayan Banking Berhad)",
	} {
		got, err := read.ResolveProvider(providers, name)
		if err != nil || got.Name != want {
			t.Errorf("%q resolved to %q, %v; want %q", name, got.Name, err, want)
		}
	}
	if got, err := read.ResolveProvider(providers, "Bank"); err == nil {
		t.Errorf("\"Bank\" alone resolved to %q: it names no one provider", got.Name)
	}
}
