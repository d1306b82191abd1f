package main_test

import (
	"io/fs"
	"os"
	osuser "os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/signature/signaturetest"
	"github.com/payout/payout/batch/watch"
	"github.com/payout/payout/ledger"
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

// TestWatchHeldRepeatsAreAcceptedBySignersOtherThanTheMaker: in folder mode a file whose rows
// repeat last week's payouts waits in awaiting-approval (exit 5), not in failed, with a note that
// lists the held rows and says how to accept them without a command line of payout; a signature
// in the namespace payout-repeat by the account that dropped the file does not count; one by
// another allowed signer (`payout approve --accept-repeats`) has the next pass pay the whole file,
// and the signatures move with it.
func TestWatchHeldRepeatsAreAcceptedBySignersOtherThanTheMaker(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	sb := newSandbox(t)
	u := newUser(t, sb)
	me, err := osuser.Current()
	if err != nil {
		t.Fatal(err)
	}
	keys := t.TempDir()
	maker, bob := signaturetest.NewKey(t, keys, "maker"), signaturetest.NewKey(t, keys, "bob")
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(keys, "allowed_signers"),
		maker.AllowedLine(me.Username+"@example.com"), bob.AllowedLine("bob@example.com"))
	u.env = append(u.env, "PAYOUT_ALLOWED_SIGNERS="+allowed)

	if _, errOut, code := u.run("run", samplePath(t)); code != 0 {
		t.Fatalf("paying November: exit %d\n%s", code, errOut)
	}
	paid := sb.Stats().Creates
	dir := filepath.Join(realDir(t, u), "payroll")
	if err := os.MkdirAll(filepath.Join(dir, "inbox"), 0o750); err != nil {
		t.Fatal(err)
	}
	november, err := os.ReadFile(samplePath(t))
	if err != nil {
		t.Fatal(err)
	}
	// The same people, accounts and amounts under new references: every row repeats November's.
	december := strings.ReplaceAll(string(november), "PAY-2026-11-", "PAY-2026-12-")
	if err := os.WriteFile(filepath.Join(dir, "inbox", "december.csv"), []byte(december), 0o600); err != nil {
		t.Fatal(err)
	}
	expectExit5(t, u, "", "watch", "--once", "--settle", "0", dir)
	waiting := filepath.Join(dir, "awaiting-approval", "december.csv")
	note, err := os.ReadFile(waiting + ".why.txt")
	if err != nil {
		t.Fatalf("the held file is not waiting in awaiting-approval: %v", err)
	}
	for _, want := range []string{"50 of its 50 rows are held as possible repeats", "line 2, PAY-2026-12-001: MYR 6347.10, ", "line 3, PAY-2026-12-002: MYR 7939.84, ",
		"payout approve --accept-repeats " + waiting + "\n",
		"payout plan --allow-repeats " + waiting + " | ssh-keygen -Y sign -f KEY -n payout-repeat > " + waiting + ".NAME.sig"} {
		if !strings.Contains(string(note), want) {
			t.Errorf("the held file's note does not say %q:\n%s", want, note)
		}
	}
	if strings.Contains(string(note), "--allow-repeat PAY") {
		t.Errorf("the note asks the folder's people for a command line flag:\n%s", note)
	}
	// Passes that find no complete acceptance leave the file be: no run, no new reports.
	reports := func() int {
		m, _ := filepath.Glob(filepath.Join(dir, "reports", "december.*"))
		return len(m)
	}
	held := reports()
	expectExit5(t, u, "", "watch", "--once", "--settle", "0", dir)
	if n := reports(); n != held {
		t.Errorf("a pass ran the held file again without its acceptance: %d reports, want %d", n, held)
	}
	if list, _ := os.ReadFile(filepath.Join(dir, "awaiting-approval", "WAITING.txt")); !strings.Contains(string(list), "december.csv") ||
		!strings.Contains(string(list), "held as possible repeats") {
		t.Errorf("WAITING.txt does not list the held file:\n%s", list)
	}

	plan, errOut, code := u.run("plan", "--allow-repeats", waiting)
	if code != 0 {
		t.Fatalf("plan --allow-repeats: exit %d\n%s", code, errOut)
	}
	sign := func(k signaturetest.Key, name string) {
		t.Helper()
		if err := os.WriteFile(waiting+"."+name+".sig", signaturetest.Sign(t, k, "payout-repeat", []byte(plan)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sign(maker, "maker")
	expectExit5(t, u, "", "watch", "--once", "--settle", "0", dir)
	if note, _ := os.ReadFile(waiting + ".why.txt"); !strings.Contains(string(note), "who made the file ("+me.Username+" dropped it)") {
		t.Errorf("the maker's own acceptance is not named as not counted:\n%s", note)
	}
	if n := sb.Stats().Creates; n != paid {
		t.Fatalf("the maker's acceptance sent %d payouts", n-paid)
	}
	if n := reports(); n != held {
		t.Errorf("the maker's acceptance ran the held file again: %d reports, want %d", n, held)
	}

	if out, errOut, code := u.run("approve", "--accept-repeats", "--key", bob.Path, waiting); code != 0 || !strings.Contains(out, "SIGNED by bob@example.com") {
		t.Fatalf("approve --accept-repeats as bob: exit %d\n%s%s", code, out, errOut)
	}
	// Had bob dropped the file through the web console, his acceptance would not count either.
	sum, err := read.FileSHA256(waiting)
	if err != nil {
		t.Fatal(err)
	}
	droppedBy := watch.DroppedByNote(dir, sum)
	if err := os.WriteFile(droppedBy, []byte("bob@example.com\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	expectExit5(t, u, "", "watch", "--once", "--settle", "0", dir)
	if note, _ := os.ReadFile(waiting + ".why.txt"); !strings.Contains(string(note), "bob@example.com dropped this file") {
		t.Errorf("the console dropper's acceptance is not named as not counted:\n%s", note)
	}
	if n := sb.Stats().Creates; n != paid {
		t.Fatalf("the console dropper's acceptance sent %d payouts", n-paid)
	}
	if err := os.Remove(droppedBy); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := u.run("watch", "--once", "--settle", "0", dir); code != 0 {
		t.Fatalf("watch after bob accepted the repeats: exit %d\n%s%s", code, out, errOut)
	}
	if n := sb.Stats().Creates; n != paid+50 {
		t.Errorf("bob's acceptance sent %d payouts, want 50", n-paid)
	}
	for _, name := range []string{"december.csv", "december.csv.bob@example.com.repeats.sig", "december.csv.maker.sig"} {
		if _, err := os.Stat(filepath.Join(dir, "done", name)); err != nil {
			t.Errorf("%s did not move to done: %v", name, err)
		}
	}
	if who, err := os.ReadFile(filepath.Join(dir, "done", "december.csv.repeats-accepted.txt")); err != nil ||
		!strings.Contains(string(who), "ACCEPTED") || !strings.Contains(string(who), "bob@example.com: signature file december.csv.bob@example.com.repeats.sig") {
		t.Errorf("no record beside the paid file of who accepted its repeats (%v):\n%s", err, who)
	}
	// The chain holds the acceptance too, with the signature itself: the notes beside the file
	// can be deleted by anyone who may write the folder.
	db, err := ledger.Open(t.Context(), filepath.Join(u.dir, "payout-ledger.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	accepted, err := db.LedgerEvents(t.Context(), ledger.EventFilter{Kind: ledger.EventRepeatsAccepted})
	db.Close()
	if err != nil || len(accepted) != 1 || accepted[0].Facts["principal"] != "bob@example.com" ||
		!strings.Contains(accepted[0].Facts["signature"], "BEGIN SSH SIGNATURE") || accepted[0].Facts["file"] != "december.csv" {
		t.Errorf("the chain's record of who accepted the repeats (%v): %+v", err, accepted)
	}
	if out, errOut, code := u.run("audit", "verify"); code != 0 {
		t.Errorf("audit verify after the acceptance: exit %d\n%s%s", code, out, errOut)
	}
	if list, _ := os.ReadFile(filepath.Join(dir, "awaiting-approval", "WAITING.txt")); !strings.Contains(string(list), "Nothing is waiting") {
		t.Errorf("WAITING.txt once the file is paid:\n%s", list)
	}

	// A held repeat beside a row to correct: the file fails, and its note asks for the correction
	// only, never for a command line.
	lines := strings.Split(string(november), "\n")
	mixed := lines[0] + "\n" + strings.Replace(lines[1], "PAY-2026-11-", "PAY-2027-01-", 1) + "\n" +
		"PAY-2027-01-999,Tan Wei Ming,Maybank,0123456789,-5.00,Gaji\n"
	if err := os.WriteFile(filepath.Join(dir, "inbox", "mixed.csv"), []byte(mixed), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := u.run("watch", "--once", "--settle", "0", dir); code != 3 {
		t.Fatalf("watch with a held repeat and a bad row: exit %d, want 3\n%s", code, errOut)
	}
	why, err := os.ReadFile(filepath.Join(dir, "failed", "mixed.csv.why.txt"))
	if err != nil || strings.Contains(string(why), "--allow-repeat") || !strings.Contains(string(why), "need no correction if they are meant") {
		t.Errorf("the note of a file with a held repeat and a bad row (%v):\n%s", err, why)
	}
}
