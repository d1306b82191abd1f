package report_test

import (
	"context"
	"fmt"
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

// TestResultXLSXPrintsOnLandscapePagesOneWide prints result workbooks of 50 and 150 rows to PDF
// with LibreOffice: the 50 rows take one or two landscape pages, the 150 more; every page of rows
// carries the header row, first column to last (no column goes to a page of its own), and the
// summary takes one page.
func TestResultXLSXPrintsOnLandscapePagesOneWide(t *testing.T) {
	office := reporttest.NeedTool(t, "libreoffice-calc", "libreoffice", "soffice")
	reporttest.NeedTool(t, "poppler-utils", "pdfinfo")
	dir := t.TempDir()
	var books []string
	for _, n := range []int{50, 150} {
		s := sampleSummary()
		s.RunID = fmt.Sprintf("20261122T083000Z-rows%d", n)
		books = append(books, writeRun(t, s, payroll(t, n)).XLSX)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, office, append([]string{"--headless", "-env:UserInstallation=file://" + filepath.Join(dir, "profile"),
		"--convert-to", "pdf", "--outdir", dir}, books...)...)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("libreoffice --convert-to pdf: %v\n%s", err, out)
	}
	for i, book := range books {
		pdf := filepath.Join(dir, strings.TrimSuffix(filepath.Base(book), ".xlsx")+".pdf")
		texts, landscape := pdfPages(t, pdf)
		rowsPages, summaryPages := 0, 0
		for p, text := range texts {
			if !landscape[p] {
				t.Errorf("%s page %d is portrait", filepath.Base(pdf), p+1)
			}
			switch {
			case strings.Contains(text, "File SHA-256"):
				summaryPages++
			case strings.Contains(text, "external_invoice_ref") && strings.Contains(text, "message"):
				rowsPages++
			default:
				t.Errorf("%s page %d has neither the summary nor the header row, first column to last:\n%s", filepath.Base(pdf), p+1, text)
			}
		}
		if summaryPages != 1 {
			t.Errorf("%s: the summary takes %d pages, want 1", filepath.Base(pdf), summaryPages)
		}
		if i == 0 && (rowsPages < 1 || rowsPages > 2) {
			t.Errorf("%s: 50 rows print on %d pages, want 1 or 2", filepath.Base(pdf), rowsPages)
		}
		if i == 1 && rowsPages < 2 {
			t.Errorf("%s: 150 rows print on %d page(s): the header's repeat is not checked", filepath.Base(pdf), rowsPages)
		}
	}
}
