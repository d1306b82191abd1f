package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCommandSignatureFIFOIsRefused: a FIFO named like a signature beside a file (anyone who may
// drop a file there can make one) is named and counts for nothing; the run does not wait for a
// writer, holding the ledger's lock, and pays nothing.
func TestCommandSignatureFIFOIsRefused(t *testing.T) {
	sb := newSandbox(t)
	u := newUser(t, sb)
	newSigners(t, u)
	if _, errOut, code := u.run("policy", "--approvals", "1"); code != 0 {
		t.Fatal(errOut)
	}
	file := filepath.Join(u.dir, "nov.csv")
	copyFile(t, samplePath(t), file)
	if err := syscall.Mkfifo(file+".x.sig", 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := u.runWithin(20*time.Second, "run", "nov.csv")
	if code != 5 || !strings.Contains(out+errOut, "nov.csv.x.sig: not a regular file") {
		t.Fatalf("run beside a FIFO signature: exit %d, want 5 naming it\n%s%s", code, out, errOut)
	}
	if n := sb.Stats().Creates; n != 0 {
		t.Errorf("service created %d payouts", n)
	}
	if _, err := os.Stat(file + ".x.sig"); err != nil {
		t.Error(err)
	}
}
