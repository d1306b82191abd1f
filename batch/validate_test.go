package batch_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/shopspring/decimal"
)

func TestParseAmount(t *testing.T) {
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
		{"1.250,00", "", batch.ErrAmountFormat},
		{"1,25", "", batch.ErrAmountFormat},
		{"12,50.00", "", batch.ErrAmountFormat},
		{"1,2500", "", batch.ErrAmountFormat},
		{",250", "", batch.ErrAmountFormat},
		{"one hundred", "", batch.ErrAmountFormat},
		{"100 ringgit", "", batch.ErrAmountFormat},
		{"1e3", "", batch.ErrAmountFormat},
		{"+100", "", batch.ErrAmountFormat},
		{"", "", batch.ErrAmountFormat},
		{"RM", "", batch.ErrAmountFormat},
		{".", "", batch.ErrAmountFormat},
		{"1.2.3", "", batch.ErrAmountFormat},
		{"-100", "", batch.ErrAmountNotPositive},
		{"RM -5.00", "", batch.ErrAmountNotPositive},
		{"(50.00)", "", batch.ErrAmountNotPositive},
		{"50.00)", "", batch.ErrAmountNotPositive},
		{"0", "", batch.ErrAmountNotPositive},
		{"0.00", "", batch.ErrAmountNotPositive},
		{"10.001", "", batch.ErrAmountPrecision},
		{"1.500", "", batch.ErrAmountPrecision},
		{"1000000000000", "", batch.ErrAmountTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := batch.ParseAmount(tt.in)
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
	tests := []struct {
		in   string
		want string
		err  error
	}{
		{"0123456789", "0123456789", nil},
		{" 0123-456 789 ", "0123456789", nil},
		{"123456", "123456", nil},
		{"12345678901234567890", "12345678901234567890", nil},
		{"12345", "", batch.ErrAccountFormat},
		{"123456789012345678901", "", batch.ErrAccountFormat},
		{"ACC123456", "", batch.ErrAccountFormat},
		{"123456.0", "", batch.ErrAccountFormat},
		{"", "", batch.ErrAccountFormat},
		{"1.23457E+11", "", batch.ErrAccountScientific},
		{"1.23457e11", "", batch.ErrAccountScientific},
		{"12345E+6", "", batch.ErrAccountScientific},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := batch.NormalizeAccount(tt.in)
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
		{"", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := batch.ResolveProvider(providers, tt.name)
			if tt.wantID == 0 {
				if !errors.Is(err, batch.ErrBankUnknown) || !strings.Contains(err.Error(), tt.suggest) {
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
	providers := []api.Provider{{ID: 1, Name: "Example Bank Berhad"}, {ID: 2, Name: "Example Bank (Malaysia) Bhd"}}
	if _, err := batch.ResolveProvider(providers, "Example Bank"); !errors.Is(err, batch.ErrBankUnknown) || !strings.Contains(err.Error(), "more than one") {
		t.Fatalf("err = %v, want an ambiguity error", err)
	}
}

func goodRow(line int, ref string) batch.Row {
	return batch.Row{Line: line, Ref: ref, Recipient: "Tan Wei Ming", Bank: "Maybank", Account: "0123456789", Amount: "100.00"}
}

func TestValidatorRows(t *testing.T) {
	long := strings.Repeat("x", 141)
	tests := []struct {
		name   string
		edit   func(*batch.Row)
		opts   batch.ValidateOptions
		column string
		err    error
	}{
		{name: "bank by id", edit: func(r *batch.Row) { r.Bank, r.ServiceID = "", "51" }},
		{name: "bank and matching id", edit: func(r *batch.Row) { r.ServiceID = "1" }},
		{name: "bank and other id", edit: func(r *batch.Row) { r.ServiceID = "2" }, column: batch.ColServiceID, err: batch.ErrBankConflict},
		{name: "unknown id", edit: func(r *batch.Row) { r.Bank, r.ServiceID = "", "999" }, column: batch.ColServiceID, err: batch.ErrBankUnknown},
		{name: "id not a number", edit: func(r *batch.Row) { r.Bank, r.ServiceID = "", "one" }, column: batch.ColServiceID, err: batch.ErrBankUnknown},
		{name: "no bank", edit: func(r *batch.Row) { r.Bank = "" }, column: batch.ColBank, err: batch.ErrBankMissing},
		{name: "ref too long", edit: func(r *batch.Row) { r.Ref = strings.Repeat("A", 65) }, column: batch.ColRef, err: batch.ErrRefFormat},
		{name: "ref 64 characters", edit: func(r *batch.Row) { r.Ref = strings.Repeat("A", 64) }},
		{name: "ref with slash and dot", edit: func(r *batch.Row) { r.Ref = "2026/11/PAY_1.a-b" }},
		{name: "ref with space", edit: func(r *batch.Row) { r.Ref = "PAY 1" }, column: batch.ColRef, err: batch.ErrRefFormat},
		{name: "recipient too long", edit: func(r *batch.Row) { r.Recipient = long }, column: batch.ColRecipient, err: batch.ErrRecipientFormat},
		{name: "recipient blank", edit: func(r *batch.Row) { r.Recipient = "  " }, column: batch.ColRecipient, err: batch.ErrRecipientMissing},
		{name: "description too long", edit: func(r *batch.Row) { r.Description = long }, column: batch.ColDescription, err: batch.ErrDescription},
		{name: "description newline", edit: func(r *batch.Row) { r.Description = "a\nb" }, column: batch.ColDescription, err: batch.ErrDescription},
		{name: "over max amount", edit: func(r *batch.Row) { r.Amount = "100.01" }, opts: batch.ValidateOptions{MaxAmount: decimal.NewFromInt(100)}, column: batch.ColAmount, err: batch.ErrAmountTooLarge},
		{name: "at max amount", opts: batch.ValidateOptions{MaxAmount: decimal.NewFromInt(100)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Providers = sandbox.DefaultProviders()
			v := batch.NewValidator(tt.opts)
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
	v := batch.NewValidator(batch.ValidateOptions{Providers: sandbox.DefaultProviders(), DefaultDescription: "Salary"})
	p, errs := v.Check(batch.Row{Line: 7, Ref: " PAY-7 ", Recipient: " Lim Mei Ling ", Bank: "touch n go ewallet",
		Account: "01-2345 6789", Amount: "RM 1,250.5"})
	want := batch.Payment{Line: 7, Ref: "PAY-7", Recipient: "Lim Mei Ling", ProviderID: 51, Bank: "Touch 'n Go eWallet",
		Account: "0123456789", Amount: decimal.RequireFromString("1250.50"), Description: "Salary"}
	if len(errs) != 0 || p.Line != want.Line || p.Ref != want.Ref || p.Recipient != want.Recipient || p.ProviderID != want.ProviderID ||
		p.Bank != want.Bank || p.Account != want.Account || !p.Amount.Equal(want.Amount) || p.Description != want.Description {
		t.Fatalf("Check = %+v, %v; want %+v", p, errs, want)
	}
}

func TestValidatorCollectsEveryErrorOfARow(t *testing.T) {
	v := batch.NewValidator(batch.ValidateOptions{Providers: sandbox.DefaultProviders()})
	_, errs := v.Check(batch.Row{Line: 3, Ref: "", Recipient: "", Bank: "Nobank", Account: "x", Amount: "-1"})
	want := []error{batch.ErrRefMissing, batch.ErrRecipientMissing, batch.ErrBankUnknown, batch.ErrAccountFormat, batch.ErrAmountNotPositive}
	if len(errs) != len(want) {
		t.Fatalf("errors %v, want %v", errs, want)
	}
	for i, w := range want {
		if !errors.Is(errs[i], w) || errs[i].Line != 3 {
			t.Errorf("error %d = %v, want %v on line 3", i, errs[i], w)
		}
	}
}

func TestValidatorFileRules(t *testing.T) {
	t.Run("duplicate names both lines", func(t *testing.T) {
		v := batch.NewValidator(batch.ValidateOptions{Providers: sandbox.DefaultProviders()})
		v.Check(goodRow(2, "PAY-1"))
		v.Check(goodRow(3, "PAY-2"))
		_, errs := v.Check(goodRow(9, "PAY-1"))
		if len(errs) != 1 || !errors.Is(errs[0], batch.ErrRefDuplicate) || !strings.Contains(errs[0].Error(), "lines 2 and 9") {
			t.Fatalf("errors %v", errs)
		}
	})
	t.Run("total over limit", func(t *testing.T) {
		v := batch.NewValidator(batch.ValidateOptions{Providers: sandbox.DefaultProviders(), MaxTotal: decimal.RequireFromString("150")})
		v.Check(goodRow(2, "PAY-1"))
		v.Check(goodRow(3, "PAY-2"))
		errs := v.Finish()
		if len(errs) != 1 || !errors.Is(errs[0], batch.ErrTotalTooLarge) || !strings.Contains(errs[0].Error(), "200.00") {
			t.Fatalf("errors %v", errs)
		}
	})
	t.Run("total at limit", func(t *testing.T) {
		v := batch.NewValidator(batch.ValidateOptions{Providers: sandbox.DefaultProviders(), MaxTotal: decimal.RequireFromString("200")})
		v.Check(goodRow(2, "PAY-1"))
		v.Check(goodRow(3, "PAY-2"))
		if errs := v.Finish(); len(errs) != 0 || !v.Total().Equal(decimal.NewFromInt(200)) {
			t.Fatalf("errors %v, total %v", errs, v.Total())
		}
	})
	t.Run("max rows", func(t *testing.T) {
		v := batch.NewValidator(batch.ValidateOptions{Providers: sandbox.DefaultProviders(), MaxRows: 1})
		v.Check(goodRow(2, "PAY-1"))
		v.Check(goodRow(3, "PAY-2"))
		if errs := v.Finish(); len(errs) != 1 || !errors.Is(errs[0], batch.ErrTooManyRows) {
			t.Fatalf("errors %v", errs)
		}
	})
	t.Run("no rows", func(t *testing.T) {
		v := batch.NewValidator(batch.ValidateOptions{})
		if errs := v.Finish(); len(errs) != 1 || !errors.Is(errs[0], batch.ErrNoRows) {
			t.Fatalf("errors %v", errs)
		}
	})
}

func TestRowErrorText(t *testing.T) {
	e := &batch.RowError{Line: 4, Column: "amount", Value: "1,25", Err: batch.ErrAmountFormat}
	if got := e.Error(); got != `line 4: amount "1,25": not an amount in MYR` {
		t.Errorf("Error() = %q", got)
	}
}

func TestResolveProviderShortNames(t *testing.T) {
	providers := sandbox.DefaultProviders()
	for name, want := range map[string]string{
		"RHB": "RHB Bank Berhad", "Public": "Public Bank Berhad", "CIMB": "CIMB Bank Berhad",
		"Hong Leong": "Hong Leong Bank Berhad", "Bank Islam": "Bank Islam Malaysia Berhad",
		"maybank berhad": "Maybank (Malayan Banking Berhad)",
	} {
		got, err := batch.ResolveProvider(providers, name)
		if err != nil || got.Name != want {
			t.Errorf("%q resolved to %q, %v; want %q", name, got.Name, err, want)
		}
	}
	if got, err := batch.ResolveProvider(providers, "Bank"); err == nil {
		t.Errorf("\"Bank\" alone resolved to %q: it names no one provider", got.Name)
	}
}
