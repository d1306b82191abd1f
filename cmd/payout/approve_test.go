package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandRequireApproval: with --require-approval (or PAYOUT_REQUIRE_APPROVAL) an unapproved
// file pays nothing, exits 5 and names the command that approves it; its maker (the account that
// owns it, here the test's own) cannot approve it; a rejection is said by the next run; a file
// under --approval-over is paid without a second person. The approval by another account is
// proved by the batch package's tests, which inject who is who: a test runs as one OS user.
func TestCommandRequireApproval(t *testing.T) {
	sb := newSandbox(t)
	u := newUser(t, sb)
	copyFile(t, samplePath(t), filepath.Join(u.dir, "payroll.csv"))

	out, errOut, code := u.run("run", "--require-approval", "payroll.csv")
	if code != 5 || !strings.Contains(out, "NOT PAID: the file awaits a second person's approval: nobody has approved it") ||
		!strings.Contains(out, "approves it with: payout approve payroll.csv") {
		t.Fatalf("unapproved run: exit %d, want 5 naming the command\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	env := u.env
	u.env = append(append([]string(nil), env...), "PAYOUT_REQUIRE_APPROVAL=maybe")
	if _, errOut, code := u.run("run", "payroll.csv"); code != 2 || !strings.Contains(errOut, `PAYOUT_REQUIRE_APPROVAL="maybe"`) {
		t.Errorf("PAYOUT_REQUIRE_APPROVAL=maybe: exit %d, want 2 naming it: %s", code, errOut)
	}
	u.env = env
	if _, errOut, code := u.run("run", "--approval-expiry", "-1h", "payroll.csv"); code != 2 || !strings.Contains(errOut, "--approval-expiry") {
		t.Errorf("--approval-expiry -1h: exit %d, want 2: %s", code, errOut)
	}
	u.env = append(append([]string(nil), env...), "PAYOUT_REQUIRE_APPROVAL=1")
	out, _, code = u.run("run", "--json", "payroll.csv")
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 5 || res["awaiting_approval"] != "nobody has approved it" {
		t.Fatalf("PAYOUT_REQUIRE_APPROVAL=1: exit %d, %v\n%s", code, err, out)
	}
	if n := sb.Stats().Creates; n != 0 {
		t.Fatalf("unapproved runs sent %d payouts", n)
	}

	out, errOut, code = u.run("approve", "payroll.csv")
	if code != 2 || !strings.Contains(errOut, "is its maker and cannot approve it: a second person must run `payout approve payroll.csv`") ||
		!strings.Contains(errOut, "nothing was recorded") || !strings.Contains(out, "new payouts   50, MYR") {
		t.Fatalf("maker approving her own file: exit %d, want 2 after the plan\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	out, _, _ = u.run("status")
	if !strings.Contains(out, "files awaiting approval, not paid: 1") || !strings.Contains(out, "approve: payout approve payroll.csv") {
		t.Errorf("status does not list the file awaiting approval:\n%s", out)
	}

	if _, errOut, code := u.run("reject", "payroll.csv"); code != 2 || !strings.Contains(errOut, "--reason is required") {
		t.Errorf("reject without a reason: exit %d: %s", code, errOut)
	}
	if out, errOut, code := u.run("reject", "payroll.csv", "--reason", "wrong month"); code != 0 || !strings.Contains(out, "REJECTED by ") {
		t.Fatalf("maker withdrawing her file: exit %d\n%s%s", code, out, errOut)
	}
	if out, _, code := u.run("run", "payroll.csv"); code != 5 || !strings.Contains(out, "wrong month") {
		t.Fatalf("run after a rejection: exit %d\n%s", code, out)
	}
	if out, _, code := u.run("run", "--approval-over", "10", "--require-approval=false", "payroll.csv"); code != 5 {
		t.Fatalf("run above --approval-over: exit %d, want 5\n%s", code, out)
	}
	u.env = env
	if out, errOut, code := u.run("run", "--approval-over", "1000000", "payroll.csv"); code != 0 {
		t.Fatalf("run under --approval-over: exit %d\n%s%s", code, out, errOut)
	}
	if n := sb.Stats().Creates; n != 50 {
		t.Errorf("service created %d payouts, want 50", n)
	}
}

// TestCommandWatchRequireApproval: in folder mode an unapproved file waits in
// awaiting-approval/ with a note naming the command; a rejection moves it to failed.
func TestCommandWatchRequireApproval(t *testing.T) {
	sb := newSandbox(t)
	u := newUser(t, sb)
	dir := filepath.Join(realDir(t, u), "payroll")
	if err := os.MkdirAll(filepath.Join(dir, "inbox"), 0o750); err != nil {
		t.Fatal(err)
	}
	copyFile(t, samplePath(t), filepath.Join(dir, "inbox", "november.csv"))
	for range 2 {
		if _, errOut, code := u.run("watch", "--once", "--settle", "0", "--require-approval", dir); code != 5 {
			t.Fatalf("watch --once exit %d, want 5: %s", code, errOut)
		}
	}
	waiting := filepath.Join(dir, "awaiting-approval", "november.csv")
	note, err := os.ReadFile(waiting + ".why.txt")
	if err != nil || !strings.Contains(string(note), "payout approve "+waiting) {
		t.Fatalf("note beside the waiting file (%v):\n%s", err, note)
	}
	if _, errOut, code := u.run("reject", waiting, "--reason", "duplicate of October"); code != 0 {
		t.Fatalf("reject exit %d: %s", code, errOut)
	}
	if _, errOut, code := u.run("watch", "--once", "--settle", "0", "--require-approval", dir); code != 3 {
		t.Fatalf("watch after the rejection: exit %d, want 3: %s", code, errOut)
	}
	if why, err := os.ReadFile(filepath.Join(dir, "failed", "november.csv.why.txt")); err != nil || !strings.Contains(string(why), "duplicate of October") {
		t.Errorf("failed note (%v):\n%s", err, why)
	}
	if n := sb.Stats().Creates; n != 0 {
		t.Errorf("service created %d payouts", n)
	}
}
