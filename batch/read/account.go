package read

import (
	"errors"
	"fmt"
	"strings"
)

// Account number lengths accepted. Malaysian bank accounts run 10 to 16 digits and e-wallet ids
// are phone numbers (10 to 12); the bounds leave room without letting a truncated cell through.
const (
	MinAccountDigits = 6
	MaxAccountDigits = 20
)

// Reasons an account number is rejected.
var (
	ErrAccountFormat     = errors.New("account number must be digits")
	ErrAccountScientific = errors.New("account number in scientific notation: the spreadsheet turned it into a number and lost digits; format the column as text and retype it")
)

// NormalizeAccount removes spaces and dashes and checks what is left is a plausible account.
func NormalizeAccount(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fmt.Errorf("%w: empty", ErrAccountFormat)
	}
	if allDigits(s) && len(s) >= MinAccountDigits && len(s) <= MaxAccountDigits {
		return s, nil
	}
	if scientific(s) {
		return "", ErrAccountScientific
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			b.WriteByte(c)
		case c == ' ' || c == '-':
		default:
			return "", fmt.Errorf("%w: letters or symbols found (spaces and dashes are allowed)", ErrAccountFormat)
		}
	}
	if n := b.Len(); n < MinAccountDigits || n > MaxAccountDigits {
		return "", fmt.Errorf("%w: %d digits, want %d to %d", ErrAccountFormat, n, MinAccountDigits, MaxAccountDigits)
	}
	return b.String(), nil
}

// scientific spots a spreadsheet's mangling such as 1.23457E+11.
func scientific(s string) bool {
	i := strings.IndexAny(s, "eE")
	if i <= 0 || i == len(s)-1 {
		return false
	}
	mant, exp := s[:i], strings.TrimLeft(s[i+1:], "+-")
	mant = strings.Replace(mant, ".", "", 1)
	mant = strings.Replace(mant, ",", "", 1)
	return mant != "" && exp != "" && allDigits(mant) && allDigits(exp)
}
