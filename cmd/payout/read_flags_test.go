package main_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/xuri/excelize/v2"
)

func TestCommandRejectsShiftedCSVRowsAsRows(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	u := newUser(t, sb)
	path := filepath.Join(u.dir, "shifted.csv")
	content := "external_invoice_ref,recipient_reference,bank,third_party_account_no,amount,payment_description\n" +
		"E-010,Lim,Maybank,000112233440,100.00,Nov\n" +
		"E-011,Tan,Maybank,000112233445,1,200.50,Nov\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := u.run("run", path)
	if code != 3 || sb.Stats().Creates != 0 {
		t.Fatalf("exit %d, %d creates, want 3 and none: %s %s", code, sb.Stats().Creates, out, errOut)
	}
	if msg := out + errOut; !strings.Contains(msg, "line 3") || !strings.Contains(msg, "has 7 fields, the header has 6: an unquoted comma?") {
		t.Errorf("output lacks the shifted row's line and hint: %s %s", out, errOut)
	}
	out, errOut, code = u.run("run", "--allow-partial", path)
	if code != 4 || sb.Stats().Creates != 1 {
		t.Fatalf("--allow-partial: exit %d, %d creates, want 4 and one (E-010 only): %s %s", code, sb.Stats().Creates, out, errOut)
	}
}

func TestCommandXLSXFlags(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	u := newUser(t, sb)
	f := excelize.NewFile()
	rows := [][]any{
		{"external_invoice_ref", "recipient_reference", "bank", "third_party_account_no", "amount"},
		{"X-1", "Tan Wei Ming", "Maybank", 123456789, 10},
		{"X-2", "Lim Mei Ling", "Maybank", "0123456789", 20},
	}
	for i, row := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetSheetRow("Sheet1", cell, &row); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.SetRowVisible("Sheet1", 3, false); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(u.dir, "flags.xlsx")
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out, errOut, code := u.run("run", "--dry-run", path)
	msg := out + errOut
	if code != 3 || !strings.Contains(msg, "--numeric-accounts") || !strings.Contains(msg, "--hidden-rows") {
		t.Fatalf("exit %d, want 3 naming both flags: %s", code, msg)
	}
	out, errOut, code = u.run("run", "--numeric-accounts", "--hidden-rows", path)
	if code != 0 || sb.Stats().Creates != 2 {
		t.Fatalf("with both flags: exit %d, %d creates, want 0 and 2: %s %s", code, sb.Stats().Creates, out, errOut)
	}
}

// TestCommandHugeCSVFieldIsRefusedInLittleMemory: a 32 MiB field is refused at its line, and the
// process never holds it (encoding/csv alone would hold it twice over).
func TestCommandHugeCSVFieldIsRefusedInLittleMemory(t *testing.T) {
	// Not in parallel: a child's peak memory starts at this process's when it forks, which the
	// parallel tests make large; the tests that run first, one at a time, find it small.
	sb := newSandbox(t)
	u := newUser(t, sb)
	// A child's peak memory starts from its parent's at fork: compare with a run on a small field.
	small := dryRunMaxRSS(t, u, writeLongField(t, u.dir, "small.csv", 100<<10))
	huge := dryRunMaxRSS(t, u, writeLongField(t, u.dir, "huge.csv", 32<<20))
	if huge-small > 8<<10 { // KiB
		t.Errorf("max RSS %d KiB for a 32 MiB field, %d KiB for a 100 KiB one: the field was held in memory", huge, small)
	}
}

// writeLongField writes a CSV whose line 3 has a field of n bytes, without holding it.
func writeLongField(tb testing.TB, dir, name string, n int) string {
	tb.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	_, err = f.WriteString("external_invoice_ref,recipient_reference,bank,third_party_account_no,amount,payment_description\n" +
		"E-1,Tan,Maybank,0123456789,10.00,Nov\nE-2,Lim,Maybank,0123456789,10.00,")
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for written := 0; err == nil && written < n; written += len(chunk) {
		_, err = f.Write(chunk)
	}
	if err == nil {
		_, err = f.WriteString("\n")
	}
	if err != nil {
		tb.Fatal(err)
	}
	return path
}

// dryRunMaxRSS runs `payout run --dry-run` on a file it must refuse at line 3, and returns the
// process's peak memory in KiB.
func dryRunMaxRSS(tb testing.TB, u *user, path string) int64 {
	tb.Helper()
	cmd := exec.Command(binPath, "run", "--dry-run", path)
	cmd.Dir, cmd.Env = u.dir, u.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		tb.Fatalf("%s: err %v, want exit 3: %.300s", filepath.Base(path), err, out.String())
	}
	if msg := out.String(); !strings.Contains(msg, filepath.Base(path)+" line 3: line longer than 64 KiB") || len(msg) > 2000 {
		tb.Errorf("output %.300q (%d bytes), want line 3 refused in a short message", msg, len(msg))
	}
	return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
}

// TestCommandXLSXCoverSheetNamesTheSheetWithTheHeader: a workbook saved on its cover page says
// that the active sheet has no header, which sheet has it and the --sheet that reads it; --sheet
// finds a sheet whatever the case it is typed in (Excel allows no two names that differ only in
// case).
func TestCommandXLSXCoverSheetNamesTheSheetWithTheHeader(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	book := func(name, sheet string) string {
		t.Helper()
		f := excelize.NewFile()
		defer f.Close()
		if err := f.SetSheetName("Sheet1", "Cover"); err != nil {
			t.Fatal(err)
		}
		if err := f.SetSheetRow("Cover", "A1", &[]any{"payroll_december", "total", 30}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.NewSheet(sheet); err != nil {
			t.Fatal(err)
		}
		for i, row := range [][]any{
			{"external_invoice_ref", "recipient_reference", "bank", "third_party_account_no", "amount"},
			{"COVER-1", "Tan Wei Ming", "Maybank", "0123456789", "10.00"},
		} {
			if err := f.SetSheetRow(sheet, "A"+strconv.Itoa(i+1), &row); err != nil {
				t.Fatal(err)
			}
		}
		f.SetActiveSheet(0)
		path := filepath.Join(u.dir, name)
		if err := f.SaveAs(path); err != nil {
			t.Fatal(err)
		}
		return path
	}
	path := book("december.xlsx", "Payroll")
	_, errOut, code := u.run("run", "--dry-run", path)
	if code == 0 || !strings.Contains(errOut, `sheet "Cover" (the active sheet`) ||
		!strings.Contains(errOut, `sheet "Payroll" has the header: run again with --sheet "Payroll"`) {
		t.Errorf("a cover page as the active sheet: exit %d, stderr %q", code, errOut)
	}
	if out, errOut, code := u.run("run", "--dry-run", "--sheet", "payroll", path); code != 0 {
		t.Errorf("--sheet payroll for the sheet Payroll: exit %d: %s %s", code, out, errOut)
	}
	if _, errOut, code := u.run("run", "--dry-run", "--sheet", "payrol", path); code == 0 || !strings.Contains(errOut, "sheets: Cover, Payroll") {
		t.Errorf("--sheet payrol: exit %d, stderr %q; want the sheets named", code, errOut)
	}
}
