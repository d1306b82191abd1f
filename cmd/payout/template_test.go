package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestCommandTemplateNeverOverwrites: the template is written whole under its name, and a file
// already there is left as it was, with exit 2 and nothing else left in the folder.
func TestCommandTemplateNeverOverwrites(t *testing.T) {
	t.Parallel()
	u := newUserWithoutLedger(t, newSandbox(t))
	if _, errOut, code := u.run("template", "--xlsx"); code != 0 {
		t.Fatalf("template --xlsx exit %d: %s", code, errOut)
	}
	path := filepath.Join(u.dir, "payout-template.xlsx")
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatalf("the template is not a workbook: %v", err)
	}
	f.Close()

	mine := filepath.Join(u.dir, "mine.csv")
	if err := os.WriteFile(mine, []byte("my own payroll\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := u.run("template", "--out", "mine.csv")
	if code != 2 || !strings.Contains(errOut, "mine.csv already exists") {
		t.Errorf("template over an existing file: exit %d, %q; want exit 2 naming the file", code, errOut)
	}
	if b, _ := os.ReadFile(mine); string(b) != "my own payroll\n" {
		t.Errorf("the existing file now holds %q", b)
	}
	entries, err := os.ReadDir(u.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// TestCommandTemplateExampleIsPayable: the example rows, in CSV and in XLSX, pass a dry run
// against the sandbox, every row valid, and the plain template stays a header alone.
func TestCommandTemplateExampleIsPayable(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	csv, errOut, code := u.run("template", "--example")
	if code != 0 {
		t.Fatalf("template --example exit %d: %s", code, errOut)
	}
	if err := os.WriteFile(filepath.Join(u.dir, "example.csv"), []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := u.run("template", "--example", "--xlsx", "--out", "example.xlsx"); code != 0 {
		t.Fatalf("template --example --xlsx exit %d: %s", code, errOut)
	}
	for _, file := range []string{"example.csv", "example.xlsx"} {
		out, errOut, code := u.run("run", "--dry-run", "--json", file)
		if code != 0 || !strings.Contains(out, `"rows":5`) || !strings.Contains(out, `"rejected":0`) {
			t.Errorf("dry run of %s: exit %d\n%s%s", file, code, out, errOut)
		}
	}
	header, _, _ := u.run("template")
	if lines := strings.Count(header, "\n"); lines != 1 {
		t.Errorf("plain template has %d lines, want the header alone:\n%s", lines, header)
	}
}
