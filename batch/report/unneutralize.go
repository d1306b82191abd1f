package report

import "strings"

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
