package words

import (
	"strings"
	"unicode/utf8"
)

// Unneutralize undoes Neutralize: text that Neutralize would have quoted, with its quote, gets
// the quote taken off. Other text, a quote before text that is no formula included, is unchanged,
// so Unneutralize(Neutralize(s)) == s for every s but a quote before a formula, which reads as
// the formula, as a spreadsheet shows it. A reader of files this program wrote (a retry
// file, a result CSV) uses it to read back the value that was meant.
func Unneutralize(s string) string {
	if rest, ok := strings.CutPrefix(s, "'"); ok && Neutralize(rest) == s {
		return rest
	}
	return s
}

// Neutralize returns s made safe to put in a spreadsheet cell: text a spreadsheet would run as a
// formula (starting, after any spaces, with =, +, -, @, tab, CR or LF, or their full-width forms)
// gets a leading single quote, which makes a spreadsheet show it as text. Other text is unchanged.
// It is for text fields only: numbers written by this package never pass through it.
func Neutralize(s string) string {
	t := strings.TrimLeft(s, " ")
	if t == "" {
		return s
	}
	r, _ := utf8.DecodeRuneInString(t)
	switch r {
	case '=', '+', '-', '@', '\t', '\r', '\n', '＝', '＋', '－', '＠':
		return "'" + s
	}
	return s
}
