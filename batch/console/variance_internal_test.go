package console

import (
	"testing"

	"github.com/shopspring/decimal"
)

// A file whose one payee's account changed, with one new payee, one amount up by half, one payee
// gone and one unchanged: each shows where a reviewer looks, and the unchanged one nowhere.
func TestCompareFindsWhatChangedSinceTheLastPaidFile(t *testing.T) {
	t.Parallel()
	amount := decimal.RequireFromString
	was := map[string]paidPayee{
		payeeKey("Nurul Aisyah binti Rahman"): {Payee: "Nurul Aisyah binti Rahman", ProviderID: 1, Account: "131860913909", Amount: amount("7939.84")},
		payeeKey("Tan Mei Ling"):              {Payee: "Tan Mei Ling", ProviderID: 2, Account: "7001234567", Amount: amount("4000.00")},
		payeeKey("Ong Swee Lan"):              {Payee: "Ong Swee Lan", ProviderID: 2, Account: "008288072902", Amount: amount("3607.18")},
		payeeKey("Rizal bin Osman"):           {Payee: "Rizal bin Osman", ProviderID: 1, Account: "492083124023", Amount: amount("5071.47")},
	}
	rows := []planRow{
		{Payee: "Nurul  Aisyah BINTI Rahman", ProviderID: 1, Bank: "Maybank", Account: "999999999999", Amount: amount("7939.84")},
		{Payee: "Tan Mei Ling", ProviderID: 2, Bank: "CIMB", Account: "7001234567", Amount: amount("6000.00")},
		{Payee: "Ong Swee Lan", ProviderID: 2, Bank: "CIMB", Account: "008288072902", Amount: amount("3700.00")},
		{Payee: "Someone New", ProviderID: 2, Bank: "CIMB", Account: "1234567890", Amount: amount("100.00")},
	}
	c := compare(was, rows, map[int64]string{1: "Maybank", 2: "CIMB"}, DefaultAmountShare)
	if len(c.AccountChanged) != 1 || c.AccountChanged[0].Was != "Maybank 131860913909" || c.AccountChanged[0].Now != "Maybank 999999999999" {
		t.Errorf("account changed: %+v, want Nurul's account, matched whatever her name's case and spacing", c.AccountChanged)
	}
	if len(c.NewPayees) != 1 || c.NewPayees[0].Payee != "Someone New" {
		t.Errorf("new payees: %+v", c.NewPayees)
	}
	if len(c.AmountMoved) != 1 || c.AmountMoved[0].Payee != "Tan Mei Ling" || c.AmountMoved[0].Was != "MYR 4,000.00" || c.AmountMoved[0].Now != "MYR 6,000.00" {
		t.Errorf("amounts moved by more than a fifth: %+v, want Tan's only (Ong's moved 2.6%%)", c.AmountMoved)
	}
	if len(c.Gone) != 1 || c.Gone[0].Payee != "Rizal bin Osman" {
		t.Errorf("payees gone: %+v", c.Gone)
	}
	if c := compare(was, nil, nil, DefaultAmountShare); len(c.Gone) != 4 || len(c.NewPayees)+len(c.AccountChanged)+len(c.AmountMoved) != 0 {
		t.Errorf("an empty file: %+v", c)
	}
}
