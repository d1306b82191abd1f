package read

import (
	"strings"
	"testing"
)

// What a number format makes of a money or account cell: each way a format can show another
// value than the cell's, and the formats that show it as it is.
func TestFormatLie(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, code, raw string
		number, account bool
		lie             string // a part of the reason; "" when the format shows the value
	}{
		{"two decimals", "#,##0.00", "9000", true, false, ""},
		{"currency text", `"RM "#,##0.00`, "9000.5", true, false, ""},
		{"currency bracket", `[$RM-43E]#,##0.00;[Red]-[$RM-43E]#,##0.00`, "9000", true, false, ""},
		{"built-in accounting", builtinFormatCodes[43], "12.30", true, false, ""},
		{"General inside", `"RM "General`, "12.345", true, false, ""},
		{"LibreOffice Standard", "Standard", "1250.5", true, false, ""},
		{"text format over a number", "@", "181590832", true, true, ""},
		{"account digits", "0", "181590832", true, true, ""},
		{"account as many zeros as digits", "000000000", "181590832", true, true, ""},
		{"literal amount", `"100.00"`, "9000", true, false, "adds digits of its own"},
		{"escaped digit", `\1#,##0.00`, "9000", true, false, "adds digits"},
		{"bare digit", `1#,##0.00`, "9000", true, false, "adds digits"},
		{"no placeholder", `"paid"`, "9000", true, false, "shows no number at all"},
		{"hidden by empty sections", ";;;", "9000", true, false, "shows no number at all"},
		{"scaled by thousands", "#,##0.00,", "9000000", true, false, "divided by a thousand"},
		{"scaled before the point", "0,.00", "9000", true, false, "divided by a thousand"},
		{"rounds away cents", "#,##0", "100.40", true, false, "shows no decimals"},
		{"rounds to one decimal", "0.0", "100.45", true, false, "rounds it to 1 decimal"},
		{"scientific", "0.00E+00", "123456789012", true, true, "scientific notation"},
		{"fraction", "# ?/?", "12.5", true, false, "fraction"},
		{"positive shown negative", `-#,##0.00`, "9000", true, false, "negative"},
		{"positive in parentheses", `"("#,##0.00")"`, "9000", true, false, "negative"},
		{"conditions", `[>1000]"100.00";0.00`, "9000", true, false, "conditions"},
		{"zero section", `0.00;-0.00;"100.00"`, "0", true, false, "adds digits"},
		{"account padded with zeros", "000000000000", "181590832", true, true, "leading zeros"},
		{"amount padded with zeros", "0000.00", "5", true, false, ""},
		{"text shown as a constant", `0;0;0;"100.00"`, "9000", false, false, "fixed text"},
		{"text with digits added", `0;0;0;"1"@`, "9000", false, false, "digits of its own"},
		{"text format with digits", `"1"@`, "9000", false, false, "digits of its own"},
		{"text as it is", `0.00;0.00;0.00;@`, "9000", false, false, ""},
		{"number format over text", "#,##0.00", "9000", false, false, ""},
	} {
		got := formatLie(tc.code, tc.raw, tc.number, tc.account)
		if tc.lie == "" && got != "" || tc.lie != "" && !strings.Contains(got, tc.lie) {
			t.Errorf("%s: format %q over %q: %q, want %q", tc.name, tc.code, tc.raw, got, tc.lie)
		}
	}
}
