package main_test

import (
	"os"
	"path/filepath"
	"testing"
)

// A dry run exits as the real run would: 3 for a file with a bad row, 4 with --allow-partial,
// which pays the good rows and reports the bad one.
func TestDryRunExitsAsTheRunWould(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	file := filepath.Join(u.dir, "partial.csv")
	if err := os.WriteFile(file, []byte("external_invoice_ref,recipient_reference,bank,third_party_account_no,amount\n"+
		"DX-1,Aminah,Maybank,5550001234,10.00\nDX-2,Bala,Maybank,5550005678,12.345\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, flags := range [][]string{nil, {"--allow-partial"}} {
		_, _, dry := u.run(append(append([]string{"run", "--dry-run"}, flags...), file)...)
		out, errOut, real := u.run(append(append([]string{"run"}, flags...), file)...)
		if dry != real || real == 0 {
			t.Errorf("run %v: dry run exit %d, the run exit %d: %s %s", flags, dry, real, out, errOut)
		}
	}
}
