package read

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// Reasons an amount is rejected.
var (
	ErrAmountFormat      = errors.New("not an amount in MYR")
	ErrAmountNotPositive = errors.New("amount must be greater than zero")
	ErrAmountPrecision   = errors.New("amount has more than two decimals")
	ErrAmountTooLarge    = errors.New("amount too large")
	ErrTotalTooLarge     = errors.New("file total over the limit")
)

// maxAmountDigits bounds the integer part whatever --max-amount says: a 13-digit ringgit amount
// is a typo, not a salary.
const maxAmountDigits = 12

// ParseAmount reads an amount as accountants write it: "1250", "1,250.00", "RM 1,250.50",
// "myr12.5". Thousands separators only in groups of three before the point; "1.250,00" (a
// locale form) and "1,25" are ambiguous and rejected, as are words, signs and parentheses.
func ParseAmount(s string) (decimal.Decimal, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return decimal.Decimal{}, fmt.Errorf("%w: empty", ErrAmountFormat)
	}
	if len(s) >= 3 && strings.EqualFold(s[:3], "MYR") {
		s = strings.TrimSpace(s[3:])
	} else if len(s) >= 2 && strings.EqualFold(s[:2], "RM") {
		s = strings.TrimSpace(s[2:])
	}
	if s == "" {
		return decimal.Decimal{}, fmt.Errorf("%w: no number", ErrAmountFormat)
	}
	if s[0] == '-' || s[0] == '(' || strings.HasPrefix(s, "\u2212") || strings.HasSuffix(s, ")") {
		return decimal.Decimal{}, fmt.Errorf("%w: negative amounts are not payouts", ErrAmountNotPositive)
	}
	if d, ok := plainAmount(s); ok {
		return d, nil
	}
	intPart, frac, hasPoint := strings.Cut(s, ".")
	if strings.Contains(frac, ",") || strings.Contains(frac, ".") {
		return decimal.Decimal{}, fmt.Errorf("%w: write 1250.00 or 1,250.00 (a point for decimals, commas for thousands)", ErrAmountFormat)
	}
	var digits strings.Builder
	groups := strings.Split(intPart, ",")
	for i, g := range groups {
		if !allDigits(g) {
			return decimal.Decimal{}, fmt.Errorf("%w: only digits, a decimal point and thousands commas", ErrAmountFormat)
		}
		if len(groups) > 1 && ((i == 0 && (len(g) < 1 || len(g) > 3)) || (i > 0 && len(g) != 3)) {
			return decimal.Decimal{}, fmt.Errorf("%w: thousands separators must group three digits (1,250.00)", ErrAmountFormat)
		}
		digits.WriteString(g)
	}
	if !allDigits(frac) {
		return decimal.Decimal{}, fmt.Errorf("%w: only digits, a decimal point and thousands commas", ErrAmountFormat)
	}
	if digits.Len() == 0 && frac == "" {
		return decimal.Decimal{}, fmt.Errorf("%w: no digits", ErrAmountFormat)
	}
	if hasPoint && frac == "" && digits.Len() == 0 {
		return decimal.Decimal{}, fmt.Errorf("%w: no digits", ErrAmountFormat)
	}
	if len(frac) > 2 {
		return decimal.Decimal{}, ErrAmountPrecision
	}
	intDigits := strings.TrimLeft(digits.String(), "0")
	if len(intDigits) > maxAmountDigits {
		return decimal.Decimal{}, fmt.Errorf("%w: more than %d digits before the point", ErrAmountTooLarge, maxAmountDigits)
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
		return decimal.Decimal{}, fmt.Errorf("%w: %v", ErrAmountFormat, err)
	}
	if !d.IsPositive() {
		return decimal.Decimal{}, ErrAmountNotPositive
	}
	return d, nil
}

// plainAmount is the common case, "1250" or "1250.5" or "1250.50", without the general
// parser's allocations. Anything else (or zero) goes the long way, which gives the reason.
func plainAmount(s string) (decimal.Decimal, bool) {
	var cents int64
	intDigits, fracDigits, point := 0, 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			if point {
				fracDigits++
			} else {
				intDigits++
			}
			cents = cents*10 + int64(c-'0')
		case c == '.' && !point:
			point = true
		default:
			return decimal.Decimal{}, false
		}
	}
	if intDigits == 0 || intDigits > maxAmountDigits || fracDigits > 2 || cents == 0 {
		return decimal.Decimal{}, false
	}
	for ; fracDigits < 2; fracDigits++ {
		cents *= 10
	}
	return decimal.New(cents, -2), true
}

// allDigits reports whether s holds ASCII digits only (true for "").
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
