package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

func TestCommandRejectsShiftedCSVRowsAsRows(t *testing.T) {
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
