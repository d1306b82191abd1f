package report_test

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/batch/report/reporttest"
	"github.com/payout/payout/batch/words"
)

// payroll is n rows of a run as they come back from the service: long names and bank names, a
// few failures with the service's message.
func payroll(tb testing.TB, n int) []report.Row {
	banks := []string{"Bank Rakyat (Bank Kerjasama Rakyat Malaysia Berhad)", "Maybank (Malayan Banking Berhad)",
		"UOB Malaysia (United Overseas Bank (Malaysia) Bhd)", "CIMB Bank Berhad"}
	rows := make([]report.Row, n)
	for i := range rows {
		rows[i] = report.Row{Line: i + 2, Ref: fmt.Sprintf("PAY-2026-11-%06d", i+1),
			Recipient: fmt.Sprintf("Nur Syafiqah Aisyah binti Mohd Khairul %d", i+1), ProviderID: int64(i%4 + 1),
			Bank: banks[i%len(banks)], Account: fmt.Sprintf("%016d", 1512345678900000+i), Amount: dec(tb, fmt.Sprintf("%d.%02d", 1000+i, i%100)),
			State: report.StateSucceeded, InvoiceNo: fmt.Sprintf("POI2026112600%06d", i+1), TransactionStatus: "SUCCESS"}
		if i%10 == 3 {
			rows[i].State, rows[i].TransactionStatus, rows[i].InvoiceNo = report.StateFailed, "FAILED", ""
			rows[i].Message = "the service refused the payout: the beneficiary account is closed or dormant; check the account number with the employee"
		}
	}
	return rows
}

// pdfPages returns each page's text and whether it is landscape.
func pdfPages(t *testing.T, pdf string) (texts []string, landscape []bool) {
	t.Helper()
	info, err := exec.Command(reporttest.NeedTool(t, "poppler-utils", "pdfinfo"), "-f", "1", "-l", "1000", pdf).Output()
	if err != nil {
		t.Fatalf("pdfinfo %s: %v", pdf, err)
	}
	for _, m := range regexp.MustCompile(`Page\s+\d+ size:\s+([\d.]+) x ([\d.]+) pts`).FindAllStringSubmatch(string(info), -1) {
		w, _ := strconv.ParseFloat(m[1], 64)
		h, _ := strconv.ParseFloat(m[2], 64)
		landscape = append(landscape, w > h)
	}
	text, err := exec.Command(reporttest.NeedTool(t, "poppler-utils", "pdftotext"), "-layout", pdf, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext %s: %v", pdf, err)
	}
	texts = strings.Split(strings.TrimSuffix(string(text), "\f"), "\f")
	if len(texts) != len(landscape) {
		t.Fatalf("%s: pdfinfo counts %d pages, pdftotext %d", pdf, len(landscape), len(texts))
	}
	return texts, landscape
}

// reconciliation is n payouts of a reconciliation as an auditor meets them: long names, the
// bank's names, and a few mismatches with the service's message.
func reconciliation(tb testing.TB, n int) []report.ReconRow {
	rows := make([]report.ReconRow, n)
	for i := range rows {
		amt := dec(tb, fmt.Sprintf("%d.%02d", 1000+i, i%100))
		rows[i] = report.ReconRow{Ref: fmt.Sprintf("PAY-2026-11-%06d", i+1), Line: i + 2, RunID: "20261122T083000Z-ab12cd34ef56",
			Recipient: fmt.Sprintf("Nur Syafiqah Aisyah binti Mohd Khairul %d", i+1), Account: fmt.Sprintf("%016d", 1512345678900000+i),
			LedgerState: report.StateSucceeded, LedgerAmount: amt, ServiceStatus: "SUCCESS", ServiceAmount: &amt,
			ServiceAccount: fmt.Sprintf("%016d", 1512345678900000+i), InvoiceNo: fmt.Sprintf("POI2026112600%06d", i+1),
			NameAtBank: fmt.Sprintf("NUR SYAFIQAH AISYAH BINTI MOHD KHAIRUL %d", i+1)}
		if i%10 == 3 {
			other := amt.Add(dec(tb, "10"))
			rows[i].ServiceAmount = &other
			rows[i].Mismatches = []string{words.MismatchAmount}
			rows[i].Message = "the service holds another amount than the ledger: ask the service which was paid before paying again"
		}
	}
	return rows
}

// printToPDF converts workbooks to PDF with LibreOffice, as a person printing them would, and
// returns each PDF's path.
func printToPDF(t *testing.T, books ...string) []string {
	t.Helper()
	office := reporttest.NeedTool(t, "libreoffice-calc", "libreoffice", "soffice")
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, office, append([]string{"--headless", "-env:UserInstallation=file://" + filepath.Join(dir, "profile"),
		"--convert-to", "pdf", "--outdir", dir}, books...)...)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("libreoffice --convert-to pdf: %v\n%s", err, out)
	}
	pdfs := make([]string, len(books))
	for i, book := range books {
		pdfs[i] = filepath.Join(dir, strings.TrimSuffix(filepath.Base(book), ".xlsx")+".pdf")
	}
	return pdfs
}

// pdfTextSizes returns the size in points of every font a PDF's pages set text in (its content
// streams' Tf operators, which LibreOffice writes already scaled to the page), by how often.
func pdfTextSizes(t *testing.T, pdf string) map[float64]int {
	t.Helper()
	data, err := os.ReadFile(pdf)
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[float64]int{}
	streams := regexp.MustCompile(`(?s)stream\r?\n(.*?)endstream`)
	tf := regexp.MustCompile(`/[A-Za-z0-9+]+ ([0-9.]+) Tf`)
	for _, m := range streams.FindAllSubmatch(data, -1) {
		zr, err := zlib.NewReader(bytes.NewReader(m[1]))
		if err != nil {
			continue // not a Flate stream: fonts and images
		}
		content, _ := io.ReadAll(zr)
		for _, f := range tf.FindAllSubmatch(content, -1) {
			if size, err := strconv.ParseFloat(string(f[1]), 64); err == nil {
				sizes[size]++
			}
		}
	}
	if len(sizes) == 0 {
		t.Fatalf("%s sets no text with a Tf operator: the check reads nothing", pdf)
	}
	return sizes
}

// TestReportsPrintReadablyOnA4Landscape prints a run's result workbook (50 and 150 rows) and a
// reconciliation's (150 payouts) to PDF with LibreOffice: every page is landscape; every page of
// rows carries the header row under readable headings, its printed columns first to last (none
// goes to a page of its own); no text is set below 8 pt; the pages stay within what the rows
// need at that size; the summary takes one page and says who approved.
func TestReportsPrintReadablyOnA4Landscape(t *testing.T) {
	reporttest.NeedTool(t, "libreoffice-calc", "libreoffice", "soffice")
	reporttest.NeedTool(t, "poppler-utils", "pdfinfo")
	type printout struct {
		book     string
		rows     int
		heading  []string // headings, first printed column to last, on every page of rows (one word of each: a heading may wrap)
		offPaper []string // headings of the columns beyond the print area, on no page
		summary  string   // what only the summary page says
	}
	var printouts []printout
	for _, n := range []int{50, 150} {
		s := sampleSummary()
		s.RunID = fmt.Sprintf("20261122T083000Z-rows%d", n)
		s.ApprovedBy, s.ApprovedAt = "alice@example.com, bob@example.com", started
		printouts = append(printouts, printout{book: writeRun(t, s, payroll(t, n)).XLSX, rows: n,
			heading: []string{"Line", "Reference", "Message"}, offPaper: []string{"Provider", "Status"}, summary: "File SHA-256"})
	}
	recon, err := report.WriteReconciliation(filepath.Join(t.TempDir(), "reports"),
		report.ReconSummary{ID: "20261122T060000Z-print", Started: started, Ended: ended, Scope: "since 2026-11-01"}, reconciliation(t, 150))
	if err != nil {
		t.Fatal(err)
	}
	printouts = append(printouts, printout{book: recon.XLSX, rows: 150,
		heading: []string{"Reference", "Mismatches", "bank"}, offPaper: []string{"Name check", "Invoice no.", "POI2026"}, summary: "With mismatches"})
	books := make([]string, len(printouts))
	for i, p := range printouts {
		books[i] = p.book
	}
	for i, pdf := range printToPDF(t, books...) {
		p, name := printouts[i], filepath.Base(pdf)
		for size, n := range pdfTextSizes(t, pdf) {
			if size < 8 {
				t.Errorf("%s sets %d pieces of text at %.2f pt, want 8 pt or more", name, n, size)
			}
		}
		texts, landscape := pdfPages(t, pdf)
		rowsPages, summaryPages := 0, 0
		for page, text := range texts {
			if !landscape[page] {
				t.Errorf("%s page %d is portrait", name, page+1)
			}
			for _, off := range p.offPaper {
				if strings.Contains(text, off) {
					t.Errorf("%s page %d prints %q, of a column beyond the print area", name, page+1, off)
				}
			}
			if strings.Contains(text, "external_invoice_ref") || strings.Contains(text, "ledger_amount") {
				t.Errorf("%s page %d heads its columns with the CSV's names, want headings people read:\n%s", name, page+1, text)
			}
			switch {
			case strings.Contains(text, p.summary):
				summaryPages++
				if i < 2 && !strings.Contains(text, "alice@example.com, bob@example.com") {
					t.Errorf("%s: the summary does not say who approved:\n%s", name, text)
				}
				if strings.Contains(text, "Dry run") {
					t.Errorf("%s: a run's summary speaks of a dry run:\n%s", name, text)
				}
			case containsAll(text, p.heading):
				rowsPages++
			default:
				t.Errorf("%s page %d has neither the summary nor the header row, first printed column to last:\n%s", name, page+1, text)
			}
		}
		if summaryPages != 1 {
			t.Errorf("%s: the summary takes %d pages, want 1", name, summaryPages)
		}
		// At 8 pt a landscape page holds about 40 lines; a row of this sample wraps its long names
		// over three or four: at least 7 rows a page, and at least two pages for 150 rows (the
		// header's repeat is checked).
		if most := (p.rows + 6) / 7; rowsPages > most || rowsPages < 2 && p.rows > 100 {
			t.Errorf("%s: %d rows print on %d pages, want 2 to %d", name, p.rows, rowsPages, most)
		}
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
