package read

import (
	"errors"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// A number format decides what a cell shows, and a workbook can make it show anything: the
// literal format "100.00" shows 100.00 over a cell that holds 9000, "0,," shows 9 for 9000000,
// "000000000000" shows twelve digits over an account stored as 181590832, a fourth section
// shows fixed text over a text cell. People check the workbook, the run pays the value: a
// money or account cell whose format shows anything but its value is rejected, naming the cell.

// ErrCellFormat is a money or account cell whose number format shows another value than the
// cell holds.
var ErrCellFormat = errors.New("the cell's number format shows another value than the cell holds")

// builtinFormatCodes are the codes of the built-in number formats that show a number other
// than plainly (0, General, shows it as it is); dates and percentages are told by
// builtinFormatShows.
var builtinFormatCodes = map[int]string{
	1: "0", 2: "0.00", 3: "#,##0", 4: "#,##0.00",
	5: `#,##0_);(#,##0)`, 6: `#,##0_);[Red](#,##0)`, 7: `#,##0.00_);(#,##0.00)`, 8: `#,##0.00_);[Red](#,##0.00)`,
	11: "0.00E+00", 12: "# ?/?", 13: "# ??/??",
	37: "#,##0 ;(#,##0)", 38: "#,##0 ;[Red](#,##0)", 39: "#,##0.00;(#,##0.00)", 40: "#,##0.00;[Red](#,##0.00)",
	41: `_(* #,##0_);_(* \(#,##0\);_(* "-"_);_(@_)`, 42: `_("$"* #,##0_);_("$"* \(#,##0\);_("$"* "-"_);_(@_)`,
	43: `_(* #,##0.00_);_(* \(#,##0.00\);_(* "-"??_);_(@_)`, 44: `_("$"* #,##0.00_);_("$"* \(#,##0.00\);_("$"* "-"??_);_(@_)`,
	48: "##0.0E+0", 49: "@",
}

// formatSections splits a format code at the semicolons that separate its sections (positive;
// negative; zero; text), not at those in quotes, brackets or after a backslash.
func formatSections(code string) []string {
	var sections []string
	start := 0
	for i := 0; i < len(code); i++ {
		switch code[i] {
		case '"':
			if j := strings.IndexByte(code[i+1:], '"'); j >= 0 {
				i += j + 1
			} else {
				i = len(code)
			}
		case '\\', '_', '*':
			i++
		case '[':
			if j := strings.IndexByte(code[i:], ']'); j >= 0 {
				i += j
			}
		case ';':
			sections = append(sections, code[start:i])
			start = i + 1
		}
	}
	return append(sections, code[start:])
}

// formatLie says how the number format code misshows the cell's stored value raw (a number
// when number, else text); "" when it shows the value as it is. An account also must not gain
// leading zeros, which an amount may.
func formatLie(code, raw string, number, account bool) string {
	sections := formatSections(code)
	if !number {
		text := ""
		switch {
		case len(sections) >= 4:
			text = sections[3]
		case len(sections) == 1 && strings.Contains(sections[0], "@"):
			text = sections[0]
		default:
			return "" // a number format does not touch text
		}
		if !strings.Contains(text, "@") {
			return "shows fixed text in place of the cell's"
		}
		if literalDigits(text) {
			return "adds digits of its own to the cell's"
		}
		return ""
	}
	v, err := decimal.NewFromString(strings.TrimSpace(raw))
	if err != nil {
		return "" // not a number the reader pays: rejected for what it is
	}
	for _, s := range sections {
		if strings.Contains(s, "[<") || strings.Contains(s, "[>") || strings.Contains(s, "[=") {
			return "shows numbers differently by conditions of its own"
		}
	}
	section := sections[0]
	switch {
	case v.IsNegative() && len(sections) >= 2:
		section = sections[1]
	case v.IsZero() && len(sections) >= 3:
		section = sections[2]
	}
	return sectionLie(section, v, account)
}

// sectionLie says how one section of a number format misshows v.
func sectionLie(section string, v decimal.Decimal, account bool) string {
	lower := strings.ToLower(section)
	// LibreOffice calls General "Standard"; a text format (@) shows a number as General does.
	general := strings.Contains(lower, "general") || strings.Contains(lower, "standard") || strings.Contains(lower, "@")
	if general {
		lower = strings.NewReplacer("general", "", "standard", "", "@", "").Replace(lower)
	}
	placeholders, zeros, decimals := 0, 0, -1
	for i := 0; i < len(lower); i++ {
		switch c := lower[i]; {
		case c == '"':
			j := strings.IndexByte(lower[i+1:], '"')
			if j < 0 {
				j = len(lower) - i - 1
			}
			if strings.ContainsAny(lower[i+1:i+1+j], "0123456789") {
				return "adds digits of its own to the number"
			}
			if strings.ContainsAny(lower[i+1:i+1+j], "-(") && v.IsPositive() {
				return "shows it as a negative amount"
			}
			i += j + 1
		case c == '\\':
			if i+1 < len(lower) && (isDigit(lower[i+1]) || lower[i+1] == '-') {
				return "adds digits or a sign of its own to the number"
			}
			i++
		case c == '_' || c == '*':
			i++
		case c == '[':
			if j := strings.IndexByte(lower[i:], ']'); j >= 0 {
				i += j
			}
		case c == '0' || c == '#' || c == '?':
			placeholders++
			if decimals >= 0 {
				decimals++
			} else if c == '0' {
				zeros++
			}
		case c == '.':
			if decimals < 0 {
				decimals = 0
			}
		case c == ',':
			if i > 0 && strings.IndexByte("0#?", lower[i-1]) >= 0 && (i+1 == len(lower) || strings.IndexByte("0#?", lower[i+1]) < 0) {
				return "shows it divided by a thousand (a comma after the digits)"
			}
		case c == 'e' && i+1 < len(lower) && (lower[i+1] == '+' || lower[i+1] == '-'):
			return "shows it in scientific notation"
		case c == '/':
			return "shows it as a fraction"
		case c >= '1' && c <= '9':
			return "adds digits of its own to the number"
		case (c == '-' || c == '(') && v.IsPositive():
			return "shows it as a negative amount"
		}
	}
	if general {
		return ""
	}
	if placeholders == 0 {
		return "shows no number at all, only fixed text or nothing"
	}
	if decimals < 0 {
		decimals = 0
	}
	if !v.Round(int32(decimals)).Equal(v) {
		if decimals == 0 {
			return "shows no decimals, rounding it"
		}
		return "rounds it to " + plural(decimals, "decimal")
	}
	if account && zeros > len(v.Truncate(0).Abs().String()) {
		return "adds leading zeros the cell does not hold"
	}
	return ""
}

// literalDigits tells whether a text section writes digits of its own: quoted, escaped or bare.
func literalDigits(section string) bool {
	for i := 0; i < len(section); i++ {
		switch c := section[i]; {
		case c == '[':
			if j := strings.IndexByte(section[i:], ']'); j >= 0 {
				i += j
			}
		case c == '_' || c == '*':
			i++
		case isDigit(c):
			return true
		}
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
