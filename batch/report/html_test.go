package report_test

import (
	"os"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"golang.org/x/net/html"

	"github.com/payout/payout/batch/report"
)

func parseHTML(tb testing.TB, path string) *html.Node {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	doc, err := html.Parse(f)
	if err != nil {
		tb.Fatalf("parse %s: %v", path, err)
	}
	return doc
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// walk lists the nodes in document order.
func walk(n *html.Node) []*html.Node {
	var out []*html.Node
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		out = append(out, n)
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return out
}

func textOf(n *html.Node) string {
	var b strings.Builder
	for _, d := range walk(n) {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return b.String()
}

func byID(tb testing.TB, doc *html.Node, id string) (*html.Node, int) {
	tb.Helper()
	for i, n := range walk(doc) {
		if n.Type == html.ElementNode && attr(n, "id") == id {
			return n, i
		}
	}
	tb.Fatalf("no element #%s", id)
	return nil, 0
}

func elements(n *html.Node, tag string) []*html.Node {
	var out []*html.Node
	for _, d := range walk(n) {
		if d.Type == html.ElementNode && d.Data == tag {
			out = append(out, d)
		}
	}
	return out
}

// hasClass reports whether n's class attribute lists c.
func hasClass(n *html.Node, c string) bool {
	for _, f := range strings.Fields(attr(n, "class")) {
		if f == c {
			return true
		}
	}
	return false
}

func firstWithClass(n *html.Node, tag, class string) *html.Node {
	for _, e := range elements(n, tag) {
		if hasClass(e, class) {
			return e
		}
	}
	return nil
}

// parseMYR reads "RM 1,250.00" back into a decimal.
func parseMYR(tb testing.TB, s string) decimal.Decimal {
	tb.Helper()
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "RM ") {
		tb.Fatalf("amount %q lacks the RM prefix", s)
	}
	return dec(tb, strings.ReplaceAll(strings.TrimPrefix(s, "RM "), ",", ""))
}

// mainText is the text of a cell without its secondary lines (class "sub"): what the column's
// first heading names.
func mainText(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if !hasClass(c, "sub") {
				rec(c)
			}
		}
	}
	rec(n)
	return b.String()
}

// bodyRows returns the main text of each td of each body row of table.
func bodyRows(table *html.Node) [][]string {
	var out [][]string
	for _, tbody := range elements(table, "tbody") {
		for _, tr := range elements(tbody, "tr") {
			var row []string
			for _, td := range elements(tr, "td") {
				row = append(row, mainText(td))
			}
			out = append(out, row)
		}
	}
	return out
}

func TestRunHTML(t *testing.T) {
	rows := sampleRows(t)
	p := writeRun(t, sampleSummary(), rows)
	doc := parseHTML(t, p.HTML)

	_, summaryAt := byID(t, doc, "summary")
	rowsSection, rowsAt := byID(t, doc, "rows")
	if summaryAt >= rowsAt {
		t.Error("the summary does not come before the rows")
	}
	summary, _ := byID(t, doc, "summary")
	for _, want := range []string{sampleSummary().FileSHA256, sampleSummary().RunID, "payroll-nov.csv", "2026-11-22 08:30:00 +00:00", "UTC (UTC+00:00)"} {
		if !strings.Contains(textOf(summary), want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	if len(elements(summary, "svg")) != 1 || len(elements(summary, "rect")) == 0 {
		t.Error("summary has no SVG bar")
	}

	t.Run("totals tie out", func(t *testing.T) {
		states := firstWithClass(summary, "table", "states")
		sum, count := decimal.Zero, 0
		for _, r := range bodyRows(states) {
			sum = sum.Add(parseMYR(t, r[2]))
			count += int(dec(t, r[1]).IntPart())
		}
		totalNode, _ := byID(t, doc, "total-amount")
		total := parseMYR(t, textOf(totalNode))
		want := decimal.Zero
		for _, r := range rows {
			want = want.Add(r.Amount)
		}
		if !sum.Equal(total) || !total.Equal(want) || count != len(rows) {
			t.Errorf("by state %s (%d rows), total %s, rows %s (%d)", sum, count, total, want, len(rows))
		}
		tie, _ := byID(t, doc, "tie-out")
		if hasClass(tie, "bad") || !strings.Contains(textOf(tie), "✓") {
			t.Errorf("tie-out line = %q", textOf(tie))
		}
	})

	t.Run("failures first then by line", func(t *testing.T) {
		table := firstWithClass(rowsSection, "table", "rows")
		if len(elements(table, "thead")) != 1 {
			t.Error("rows table has no thead (repeated on printed pages)")
		}
		got := bodyRows(table)
		if len(got) != len(rows) {
			t.Fatalf("%d rows shown, want %d", len(got), len(rows))
		}
		var states, lines []string
		for _, r := range got {
			lines = append(lines, r[0])
			states = append(states, r[6])
		}
		wantStates := "FAILED REJECTED REJECTED UNKNOWN SUBMITTED SUCCEEDED SUCCEEDED"
		if strings.Join(states, " ") != wantStates {
			t.Errorf("states in order %q, want %q", strings.Join(states, " "), wantStates)
		}
		if strings.Join(lines, " ") != "4 5 7 6 3 2 8" {
			t.Errorf("lines in order %q", strings.Join(lines, " "))
		}
	})

	t.Run("text escaped, not markup", func(t *testing.T) {
		for _, b := range elements(rowsSection, "b") {
			t.Errorf("recipient markup became an element: %v", textOf(b))
		}
		if !strings.Contains(textOf(rowsSection), "Lee <b>bold</b> & Co") {
			t.Error("recipient text lost")
		}
	})

	t.Run("no dry-run banner", func(t *testing.T) {
		for _, n := range walk(doc) {
			if attr(n, "id") == "dry-run" {
				t.Error("a real run shows the dry-run banner")
			}
		}
	})
}

func TestRunHTMLDryRun(t *testing.T) {
	s := sampleSummary()
	s.DryRun, s.Kind = true, "dry-run"
	rows := []report.Row{
		{Line: 2, Ref: "A", Amount: decimal.NewFromInt(5), State: "READY"},
		{Line: 3, Ref: "B", AmountText: "abc", State: "REJECTED", Message: "amount: not a number"},
	}
	doc := parseHTML(t, writeRun(t, s, rows).HTML)
	banner, _ := byID(t, doc, "dry-run")
	if !strings.Contains(textOf(banner), "nothing was sent") {
		t.Errorf("banner = %q", textOf(banner))
	}
	rowsSection, _ := byID(t, doc, "rows")
	got := bodyRows(firstWithClass(rowsSection, "table", "rows"))
	if got[0][6] != "REJECTED" || got[1][6] != "READY" {
		t.Errorf("dry run order: %v", got)
	}
}

func TestRunHTMLRowLimit(t *testing.T) {
	n := report.HTMLRowLimit + 3
	rows := make([]report.Row, 0, n+2)
	for i := range n {
		rows = append(rows, report.Row{Line: i + 2, Ref: "R" + itoa(i), Amount: decimal.NewFromInt(1), State: "SUCCEEDED"})
	}
	rows = append(rows, report.Row{Line: n + 2, Ref: "F1", Amount: decimal.NewFromInt(1), State: "FAILED"},
		report.Row{Line: n + 3, Ref: "U1", Amount: decimal.NewFromInt(1), State: "UNKNOWN"})
	p := writeRun(t, report.Summary{RunID: "big"}, rows)

	if recs := readCSV(t, p.CSV); len(recs) != len(rows)+1 {
		t.Errorf("CSV has %d records, want every row: %d", len(recs), len(rows)+1)
	}
	doc := parseHTML(t, p.HTML)
	rowsSection, _ := byID(t, doc, "rows")
	got := bodyRows(firstWithClass(rowsSection, "table", "rows"))
	if len(got) != report.HTMLRowLimit+2 {
		t.Errorf("%d rows shown, want the limit plus the 2 that need attention", len(got))
	}
	if got[0][6] != "FAILED" || got[1][6] != "UNKNOWN" {
		t.Errorf("attention rows not first: %v %v", got[0], got[1])
	}
	if note := textOf(firstWithClass(rowsSection, "p", "note")); !strings.Contains(note, "3 further row(s)") {
		t.Errorf("note = %q", note)
	}
	totalNode, _ := byID(t, doc, "total-amount")
	if got := parseMYR(t, textOf(totalNode)); !got.Equal(decimal.NewFromInt(int64(len(rows)))) {
		t.Errorf("total %s covers the omitted rows too? want %d", got, len(rows))
	}
}
