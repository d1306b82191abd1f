package report_test

import (
	"bytes"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/payout/payout/batch/report"
)

func summaryText(tb testing.TB, xlsx string) string {
	tb.Helper()
	f, err := excelize.OpenFile(xlsx)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows(report.SheetSummary)
	if err != nil {
		tb.Fatal(err)
	}
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(strings.Join(r, "\t") + "\n")
	}
	return b.String()
}

func TestAbortedRunReportsSayWhyAndWhatWasNotSent(t *testing.T) {
	rows := sampleRows(t)
	rows = append(rows,
		report.Row{Line: 9, Ref: "INV-008", Amount: dec(t, "5"), State: report.StateReady, Message: "not sent"},
		report.Row{Line: 10, Ref: "INV-009", Amount: dec(t, "6"), State: report.StateReady, Message: "not sent"})
	s := sampleSummary()
	s.Aborted = "the payout service is unavailable (HTTP 503)"
	p := writeRun(t, s, rows)
	want := "ABORTED: the payout service is unavailable (HTTP 503) — run the same command again to resume"
	notSent := "2 row(s) were not sent (state READY): line 9, 10"
	if sum := summaryText(t, p.XLSX); !strings.Contains(sum, want) || !strings.Contains(sum, notSent) {
		t.Errorf("XLSX summary lacks %q and %q:\n%s", want, notSent, sum)
	}
	page := string(readFile(t, p.HTML))
	if !strings.Contains(page, `id="aborted"`) || !strings.Contains(page, want) || !strings.Contains(page, notSent) {
		t.Errorf("HTML report does not say the run was aborted:\n%s", page)
	}

	finished := writeRun(t, sampleSummary(), rows)
	if strings.Contains(summaryText(t, finished.XLSX), "ABORTED") || strings.Contains(string(readFile(t, finished.HTML)), "ABORTED") {
		t.Error("a run that was not aborted says ABORTED")
	}
}

func TestRegeneratedReportsNeverReplaceTheRunsOwn(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reports")
	rows := sampleRows(t)
	own, err := report.WriteRun(dir, "/in/payroll-nov.csv", sampleSummary(), rows)
	if err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	for _, path := range own.List() {
		before[path] = readFile(t, path)
	}
	s := sampleSummary()
	s.Regenerated = time.Date(2026, 11, 24, 9, 15, 30, 0, time.UTC)
	rows[1].State = report.StateSucceeded // the pending payout settled since
	again, err := report.WriteRun(dir, "/in/payroll-nov.csv", s, rows)
	if err != nil {
		t.Fatal(err)
	}
	stem := "payroll-nov." + s.RunID + ".regenerated-20261124T091530Z"
	if filepath.Base(again.CSV) != stem+".result.csv" || filepath.Base(again.XLSX) != stem+".result.xlsx" ||
		filepath.Base(again.HTML) != stem+".report.html" {
		t.Errorf("regenerated paths %+v, want %s.*", again, stem)
	}
	for path, data := range before {
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, data) {
			t.Errorf("the run's own report %s was changed (%v)", path, err)
		}
	}
	line := "Regenerated at 2026-11-24 09:15:30 +00:00 from the ledger"
	if !strings.Contains(summaryText(t, again.XLSX), line) || !strings.Contains(html.UnescapeString(string(readFile(t, again.HTML))), line) {
		t.Errorf("regenerated XLSX or HTML lacks %q", line)
	}
}

func TestHTMLKeepsCodesWholeAndScrollsWideTables(t *testing.T) {
	p := writeRun(t, sampleSummary(), sampleRows(t))
	rp, err := report.WriteReconciliation(filepath.Join(t.TempDir(), "r"), report.ReconSummary{ID: "rec1"}, sampleRecon(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{p.HTML, rp.HTML} {
		page := string(readFile(t, path))
		if strings.Contains(page, "break-all") {
			t.Errorf("%s: word-break: break-all cuts account numbers and references in the middle", filepath.Base(path))
		}
		for _, rule := range []string{`td\.code \{[^}]*white-space: nowrap`, `td\.msg \{[^}]*overflow-wrap: anywhere`,
			`\.scroll \{[^}]*overflow-x: auto`, `@media print \{[^@]*\.scroll \{ overflow: visible; \}`} {
			if !regexp.MustCompile(rule).MatchString(page) {
				t.Errorf("%s: no CSS rule like %s", filepath.Base(path), rule)
			}
		}
		if n, wrapped := strings.Count(page, `<table class="rows">`), strings.Count(page, "<div class=\"scroll\">\n<table class=\"rows\">"); n == 0 || n != wrapped {
			t.Errorf("%s: %d rows tables, %d in a scrolling wrapper", filepath.Base(path), n, wrapped)
		}
	}
}
