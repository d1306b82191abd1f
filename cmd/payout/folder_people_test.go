package main_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mode is a file's permission bits, or the test stops.
func mode(tb testing.TB, path string) fs.FileMode {
	tb.Helper()
	info, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return info.Mode().Perm()
}

// onlyMatch is the one file matching pattern, or the test stops.
func onlyMatch(tb testing.TB, pattern string) string {
	tb.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil || len(m) != 1 {
		tb.Fatalf("%s matches %v (%v), want one file", pattern, m, err)
	}
	return m[0]
}

// TestWatchFolderSpeaksToThePeopleWhoDropFiles runs `watch --once` as cron would, on the folders
// it makes itself (0750: the README opens them to the finance group): a refused file gets a note
// and a report that say why and quote its lines, and the command says REFUSED, not "0 rows"; a
// paid file's reports, like the notes, are readable by the folder's group and by nobody else;
// awaiting-approval/WAITING.txt lists what waits and for what, and says when nothing does. In
// folders the operator keeps private (0700), what is written stays private.
func TestWatchFolderSpeaksToThePeopleWhoDropFiles(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	sb := newSandbox(t)
	u := newUser(t, sb)
	dir := filepath.Join(realDir(t, u), "payroll")
	if err := os.MkdirAll(filepath.Join(dir, "inbox"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "inbox", "bad.csv"), []byte("external_invoice_ref,amount\nX-1,5.00\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	copyFile(t, samplePath(t), filepath.Join(dir, "inbox", "november.csv"))
	out, errOut, code := u.run("watch", "--once", "--settle", "0", dir)
	if code != 3 {
		t.Fatalf("watch with a refused file: exit %d, want 3\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "REFUSED "+filepath.Join(dir, "failed", "bad.csv")) || strings.Contains(out, "0 rows") {
		t.Errorf("watch printed, for a refused file:\n%s\nwant REFUSED with its place in failed, and no row counts", out)
	}

	note := filepath.Join(dir, "failed", "bad.csv.why.txt")
	report := onlyMatch(t, filepath.Join(dir, "reports", "bad.*.refused.txt"))
	text, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"REFUSED", "required column missing", "X-1,5.00", filepath.Join(dir, "failed", "bad.csv")} {
		if !strings.Contains(string(text), want) {
			t.Errorf("the refused file's report does not say %q:\n%s", want, text)
		}
	}
	if why, _ := os.ReadFile(note); !strings.Contains(string(why), report) {
		t.Errorf("the refused file's note does not name its report %s:\n%s", report, why)
	}
	paidReports, _ := filepath.Glob(filepath.Join(dir, "reports", "november.*"))
	if len(paidReports) != 3 {
		t.Fatalf("november.csv's reports: %v, want CSV, XLSX and HTML", paidReports)
	}
	for _, p := range append(paidReports, note, report) {
		if m := mode(t, p); m != 0o640 {
			t.Errorf("%s is %v, want 0640: readable by the folder's group, never by others", p, m)
		}
	}
	waitingList := filepath.Join(dir, "awaiting-approval", "WAITING.txt")
	if list, err := os.ReadFile(waitingList); err != nil || !strings.Contains(string(list), "Nothing is waiting for approval.") {
		t.Errorf("WAITING.txt with nothing waiting (%v):\n%s", err, list)
	}

	newSigners(t, u)
	if _, errOut, code := u.run("policy", "--approvals", "1"); code != 0 {
		t.Fatal(errOut)
	}
	if err := os.WriteFile(filepath.Join(dir, "inbox", "december.csv"), []byte("external_invoice_ref,recipient_reference,bank,third_party_account_no,amount\n"+
		"DEC-1,Tan Wei Ming,Maybank,0123456789,10.00\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	expectExit5(t, u, "", "watch", "--once", "--settle", "0", dir)
	list, err := os.ReadFile(waitingList)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1 file(s) waiting for approval", "december.csv", "waiting since", "needs 1 distinct signers; have 0", "MYR 10.00"} {
		if !strings.Contains(string(list), want) {
			t.Errorf("WAITING.txt does not say %q:\n%s", want, list)
		}
	}
	if m := mode(t, waitingList); m != 0o640 {
		t.Errorf("WAITING.txt is %v, want 0640", m)
	}

	for _, sub := range []string{"failed", "reports"} {
		if err := os.Chmod(filepath.Join(dir, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "inbox", "notes.csv"), []byte("minutes of the meeting\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := u.run("watch", "--once", "--settle", "0", dir); code != 3 {
		t.Fatalf("watch with a refused file and one waiting: exit %d, want 3\n%s", code, errOut)
	}
	private := []string{filepath.Join(dir, "failed", "notes.csv.why.txt"), onlyMatch(t, filepath.Join(dir, "reports", "notes.*.refused.txt"))}
	for _, p := range private {
		if m := mode(t, p); m != 0o600 {
			t.Errorf("%s is %v in a 0700 folder, want 0600", p, m)
		}
	}
}
