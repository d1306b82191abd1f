package ledger

import (
	"strings"

	"github.com/shopspring/decimal"
)

// AmountAsWritten is the number an amount cell says, as a run's rows keep it (RunRow.Amount holds
// the cell as written): "1250", "1,250.00", "RM 1,250.50", "myr12.5", and also what validation
// refuses only as a payout (zero, a minus sign, more than two decimals), so that a rejected row
// counts in its file's total as written. False when the text is no number at all, or an
// ambiguous one ("1.250,00", "1,25", "12,50.00"): reports list such a row and count it apart.
func AmountAsWritten(s string) (decimal.Decimal, bool) {
	s = strings.TrimSpace(s)
	s, neg := strings.CutPrefix(s, "-") // "-RM 5.00"
	s = strings.TrimSpace(s)
	if len(s) >= 3 && strings.EqualFold(s[:3], "MYR") {
		s = strings.TrimSpace(s[3:])
	} else if len(s) >= 2 && strings.EqualFold(s[:2], "RM") {
		s = strings.TrimSpace(s[2:])
	}
	if !neg {
		s, neg = strings.CutPrefix(s, "-") // "RM -5.00"
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if !asciiDigits(frac) || (intPart == "" && frac == "") {
		return decimal.Decimal{}, false
	}
	var digits strings.Builder
	groups := strings.Split(intPart, ",")
	for i, g := range groups {
		if !asciiDigits(g) || (len(groups) > 1 && ((i == 0 && (g == "" || len(g) > 3)) || (i > 0 && len(g) != 3))) {
			return decimal.Decimal{}, false
		}
		digits.WriteString(g)
	}
	num := digits.String()
	if num == "" {
		num = "0"
	}
	if frac != "" {
		num += "." + frac
	}
	d, err := decimal.NewFromString(num)
	if err != nil {
		return decimal.Decimal{}, false
	}
	if neg {
		d = d.Neg()
	}
	return d, true
}

// asciiDigits reports whether s holds ASCII digits only (true for "").
func asciiDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
