package main_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
	_ "modernc.org/sqlite"

	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/signature/signaturetest"
)

// signers are the keys of a test: alice and bob are listed, bob's key also as mallory (one key,
// two names: one signer), carol is not listed.
type signers struct {
	alice, bob, carol signaturetest.Key
	allowed           string
}

func newSigners(t *testing.T, u *user) signers {
	t.Helper()
	dir := t.TempDir()
	s := signers{alice: signaturetest.NewKey(t, dir, "alice"), bob: signaturetest.NewKey(t, dir, "bob"), carol: signaturetest.NewKey(t, dir, "carol")}
	s.allowed = signaturetest.WriteAllowedSigners(t, filepath.Join(dir, "allowed_signers"),
		s.alice.AllowedLine("alice"), s.bob.AllowedLine("bob"), s.bob.AllowedLine("mallory"))
	u.env = append(u.env, "PAYOUT_ALLOWED_SIGNERS="+s.allowed)
	return s
}

// sign signs the plan statement that `payout plan` prints with ssh-keygen, as a person would,
// into path.
func (u *user) signPlan(t *testing.T, k signaturetest.Key, file, sigPath string, planArgs ...string) []byte {
	t.Helper()
	out, errOut, code := u.run(append(append([]string{"plan"}, planArgs...), file)...)
	if code != 0 {
		t.Fatalf("plan exit %d: %s", code, errOut)
	}
	sig := signaturetest.Sign(t, k, "payout-plan", []byte(out))
	if err := os.WriteFile(sigPath, sig, 0o644); err != nil {
		t.Fatal(err)
	}
	return []byte(out)
}

func expectExit5(t *testing.T, u *user, want string, args ...string) {
	t.Helper()
	out, errOut, code := u.run(args...)
	if code != 5 || !strings.Contains(out+errOut, want) {
		t.Fatalf("payout %v: exit %d, want 5 saying %q\nstdout:\n%s\nstderr:\n%s", args, code, want, out, errOut)
	}
}

// TestCommandApprovalsAreSignatures: the ledger's policy asks for 2 distinct signers; a file pays
// only once the signatures of two principals of the allowed signers are beside it. Signatures
// of another key under two names, of an unlisted key, of another file's plan, of an expired or
// refused plan, flags and variables of run, and rows put into the ledger by hand pay nothing.
func TestCommandApprovalsAreSignatures(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	sb := newSandbox(t)
	u := newUser(t, sb)
	k := newSigners(t, u)
	if out, errOut, code := u.run("policy", "--approvals", "2"); code != 0 || !strings.Contains(out, "needs 2 signatures by 2 distinct signers") {
		t.Fatalf("policy --approvals 2: exit %d\n%s%s", code, out, errOut)
	}
	file := filepath.Join(u.dir, "payroll.csv")
	copyFile(t, samplePath(t), file)

	expectExit5(t, u, "needs 2 distinct signers; have 0", "run", "payroll.csv")
	expectExit5(t, u, "needs 2 distinct signers; have 0", "run", "--dry-run", "payroll.csv")
	for _, args := range [][]string{{"run", "--require-approval=false", "payroll.csv"}, {"run", "--approval-over", "1000000", "payroll.csv"}} {
		if _, errOut, code := u.run(args...); code != 2 || !strings.Contains(errOut, "approval policy is in the ledger") {
			t.Errorf("payout %v: exit %d, want 2 saying the policy is in the ledger: %s", args, code, errOut)
		}
	}
	env := u.env
	u.env = append(append([]string(nil), env...), "PAYOUT_REQUIRE_APPROVAL=0")
	if _, errOut, code := u.run("run", "payroll.csv"); code != 2 || !strings.Contains(errOut, "approval policy is in the ledger") {
		t.Errorf("PAYOUT_REQUIRE_APPROVAL=0: exit %d, want 2: %s", code, errOut)
	}
	u.env = env

	// One key under two names is one signer, an unlisted key none.
	u.signPlan(t, k.bob, "payroll.csv", file+".bob.sig")
	u.signPlan(t, k.bob, "payroll.csv", file+".mallory.sig")
	u.signPlan(t, k.carol, "payroll.csv", file+".carol.sig")
	expectExit5(t, u, "needs 2 distinct signers; have 1: bob/mallory", "run", "payroll.csv")
	expectExit5(t, u, "is not among the allowed signers", "run", "payroll.csv")

	// An expired signature: the statement's valid-until is yesterday.
	plan, _, _ := u.run("plan", "payroll.csv")
	yesterday := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	old := plan[:strings.LastIndex(plan, "valid-until\t")] + "valid-until\t" + yesterday + "\n"
	if err := os.WriteFile(file+".alice.sig", signaturetest.Sign(t, k.alice, "payout-plan", []byte(old)), 0o644); err != nil {
		t.Fatal(err)
	}
	expectExit5(t, u, "EXPIRED", "run", "payroll.csv")

	// The same signatures beside a copy with one account changed sign nothing of it.
	other := filepath.Join(u.dir, "changed.csv")
	data, _ := os.ReadFile(file)
	if err := os.WriteFile(other, []byte(strings.Replace(string(data), "000181590832", "000181590833", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	u.signPlan(t, k.alice, "payroll.csv", other+".alice.sig")
	u.signPlan(t, k.bob, "payroll.csv", other+".bob.sig")
	expectExit5(t, u, "does not sign this file's plan", "run", "changed.csv")

	// payout approve signs as ssh-keygen would: ssh-keygen -Y verify accepts it.
	if out, errOut, code := u.run("approve", "--key", k.alice.Path, "payroll.csv"); code != 0 || !strings.Contains(out, "SIGNED by alice") {
		t.Fatalf("approve: exit %d\n%s%s", code, out, errOut)
	}
	sig, err := os.ReadFile(file + ".alice.sig")
	if err != nil {
		t.Fatal(err)
	}
	plan, _, _ = u.run("plan", "payroll.csv")
	if out, err := signaturetest.Verify(t, k.allowed, "alice", "payout-plan", sig, []byte(plan)); err != nil {
		t.Fatalf("ssh-keygen -Y verify of payout approve's signature: %v: %s", err, out)
	}

	// A symlink pointed at another file after its target's plan was signed pays nothing: the
	// signatures bind the rows the run reads, wherever the path leads.
	link := filepath.Join(u.dir, "link.csv")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	u.signPlan(t, k.alice, "link.csv", link+".alice.sig")
	u.signPlan(t, k.bob, "link.csv", link+".bob.sig")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	expectExit5(t, u, "does not sign this file's plan", "run", "link.csv")

	// Signing writes nothing to the ledger: the signers need no access to it.
	ledgerPath := filepath.Join(u.dir, "payout-ledger.db")
	before := countEvents(t, ledgerPath)
	if _, errOut, code := u.run("approve", "--key", k.bob.Path, "changed.csv"); code != 0 {
		t.Fatalf("approve changed.csv: exit %d: %s", code, errOut)
	}
	if _, errOut, code := u.run("reject", "--key", k.bob.Path, "--reason", "test", "changed.csv"); code != 0 {
		t.Fatalf("reject changed.csv: exit %d: %s", code, errOut)
	}
	if after := countEvents(t, ledgerPath); after != before {
		t.Errorf("approve and reject wrote %d events to the ledger", after-before)
	}
	if _, err := os.Stat(filepath.Join(u.dir, "reports")); err == nil {
		entries, _ := os.ReadDir(filepath.Join(u.dir, "reports"))
		for _, e := range entries {
			if strings.Contains(e.Name(), "changed") {
				t.Errorf("approve or reject wrote a report: %s", e.Name())
			}
		}
	}
	expectExit5(t, u, "REJECTED by bob,mallory: test", "run", "changed.csv")
	for _, suffix := range []string{".bob_mallory.sig", ".bob_mallory.reject", ".bob_mallory.reject.sig"} {
		if err := os.Remove(other + suffix); err != nil {
			t.Fatal(err)
		}
	}
	// The run recorded the refusal of those bytes: another version of the file is a new plan.
	if err := os.WriteFile(other, append([]byte(strings.Replace(string(data), "000181590832", "000181590833", 1)), '\n'), 0o600); err != nil {
		t.Fatal(err)
	}

	// A row put into the old approvals table by hand is refused, and with its trigger dropped,
	// still pays nothing.
	handInsertApproval(t, filepath.Join(u.dir, "payout-ledger.db"))
	expectExit5(t, u, "needs 2 distinct signers; have 0", "run", "changed.csv")
	if n := sb.Stats().Creates; n != 0 {
		t.Fatalf("runs without the signatures sent %d payouts", n)
	}

	out, errOut, code := u.run("run", "--json", "payroll.csv")
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || !strings.Contains(res["approved_by"].(string), "alice") ||
		!strings.Contains(res["approved_by"].(string), "bob") {
		t.Fatalf("run with alice's and bob's signatures: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	// The approval inserted by hand above paid nothing, and the trail names it and the trigger
	// dropped to insert it.
	if out, errOut, code := u.run("audit", "verify"); code != 4 || !strings.Contains(out, "approvals row 000000000001: no row event records it (inserted by hand)") ||
		!strings.Contains(out, "trigger approvals_closed is missing") {
		t.Fatalf("audit verify after an approval inserted by hand: exit %d, want 4 naming it\n%s%s", code, out, errOut)
	}
	// The report written again from the ledger names the signers the chain recorded.
	reports := filepath.Join(u.dir, "again")
	if out, errOut, code := u.run("report", "--report-dir", reports, res["run_id"].(string)); code != 0 {
		t.Fatalf("report: exit %d\n%s%s", code, out, errOut)
	}
	html, _ := filepath.Glob(filepath.Join(reports, "*.report.html"))
	if len(html) != 1 {
		t.Fatalf("report HTML: %v", html)
	}
	if page, _ := os.ReadFile(html[0]); !strings.Contains(string(page), "alice") || !strings.Contains(string(page), "bob,mallory") {
		t.Errorf("the report written again does not name the signers")
	}
}

// countEvents counts the events of the ledger at path.
func countEvents(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM events`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// handInsertApproval tries what an insider with write access to the ledger would.
func handInsertApproval(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	insert := `INSERT INTO approvals (file, file_sha256, plan_digest, row_count, total, new_payouts, new_total, providers,
		providers_digest, decision, reason, actor, maker, run_id, decided_at) VALUES ('changed.csv', 'x', 'y', 50, '1', 50, '1', 1, 'z',
		'approved', '', 'bob@host', 'alice@host', '', '2026-11-24T00:00:00Z')`
	if _, err := db.Exec(insert); err == nil {
		t.Fatal("a hand-inserted approvals row was accepted")
	}
	if _, err := db.Exec(`DROP TRIGGER approvals_closed`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(insert); err != nil {
		t.Fatal(err)
	}
}

// TestCommandPolicyLoweringNeedsSignatures: raising the policy is free; lowering it needs the
// signatures of as many distinct signers as it asks, of a statement naming the policy it
// replaces, so that they cannot be used again once it was raised since.
func TestCommandPolicyLoweringNeedsSignatures(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	u := newUserWithoutLedger(t, sb)
	if out, errOut, code := u.run("init", "--approvals", "2"); code != 0 || !strings.Contains(out, "needs 2 signatures") {
		t.Fatalf("init --approvals 2: exit %d\n%s%s", code, out, errOut)
	}
	k := newSigners(t, u)
	expectExit5(t, u, "needs 2 distinct signers; have 0", "policy", "--approvals", "0")
	statement, _, _ := u.run("policy", "--statement", "--approvals", "0")
	dir := t.TempDir()
	paths := map[string]string{}
	for name, key := range map[string]signaturetest.Key{"alice": k.alice, "bob": k.bob, "carol": k.carol} {
		paths[name] = filepath.Join(dir, name+".sig")
		if err := os.WriteFile(paths[name], signaturetest.Sign(t, key, "payout-policy", []byte(statement)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	expectExit5(t, u, "have 1: alice", "policy", "--approvals", "0", "--sig", paths["alice"], "--sig", paths["carol"])
	if out, errOut, code := u.run("policy", "--approvals", "0", "--sig", paths["alice"], "--sig", paths["bob"]); code != 0 || !strings.Contains(out, "no approval needed") {
		t.Fatalf("lowering with two signers: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := u.run("policy", "--approvals", "2"); code != 0 {
		t.Fatalf("raising: exit %d\n%s%s", code, out, errOut)
	}
	expectExit5(t, u, "have 0", "policy", "--approvals", "0", "--sig", paths["alice"], "--sig", paths["bob"])
	if out, errOut, code := u.run("audit", "verify"); code != 0 {
		t.Fatalf("audit verify: exit %d\n%s%s", code, out, errOut)
	}
}

// TestCommandApprovalCoversTheSheet: the signatures of one sheet's plan do not pay another sheet
// of the same workbook with the same references, rows and total but other accounts; a signed
// refusal beside a file blocks it.
func TestCommandApprovalCoversTheSheet(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	u := newUser(t, sb)
	k := newSigners(t, u)
	if _, errOut, code := u.run("policy", "--approvals", "1"); code != 0 {
		t.Fatal(errOut)
	}
	f := excelize.NewFile()
	if _, err := f.NewSheet("Alt"); err != nil {
		t.Fatal(err)
	}
	for sheet, account := range map[string]string{"Sheet1": "0123456789", "Alt": "0999999999"} {
		rows := [][]any{{"external_invoice_ref", "recipient_reference", "bank", "third_party_account_no", "amount"},
			{"S-1", "Tan Wei Ming", "Maybank", account, "10.00"}}
		for i, row := range rows {
			cell, _ := excelize.CoordinatesToCellName(1, i+1)
			if err := f.SetSheetRow(sheet, cell, &row); err != nil {
				t.Fatal(err)
			}
		}
	}
	path := filepath.Join(u.dir, "book.xlsx")
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	f.Close()
	u.signPlan(t, k.alice, "book.xlsx", path+".alice.sig")
	expectExit5(t, u, "does not sign this file's plan", "run", "--sheet", "Alt", "book.xlsx")
	if out, errOut, code := u.run("reject", "--key", k.bob.Path, "--reason", "wrong month", "book.xlsx"); code != 0 {
		t.Fatalf("reject: exit %d\n%s%s", code, out, errOut)
	}
	// A dry run does not record the refusal, so that the file pays once it is taken away.
	expectExit5(t, u, "REJECTED by bob,mallory: wrong month", "run", "--dry-run", "book.xlsx")
	for _, name := range []string{"book.xlsx.bob_mallory.reject", "book.xlsx.bob_mallory.reject.sig"} {
		if err := os.Remove(filepath.Join(u.dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if out, errOut, code := u.run("run", "book.xlsx"); code != 0 {
		t.Fatalf("run of the signed sheet: exit %d\n%s%s", code, out, errOut)
	}
	if n := sb.Stats().Creates; n != 1 {
		t.Errorf("service created %d payouts, want 1", n)
	}
}

// TestCommandWatchAwaitsSignatures: in folder mode a file waits in awaiting-approval/ until its
// signatures are beside it; the next pass pays it and moves the signatures along.
func TestCommandWatchAwaitsSignatures(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	sb := newSandbox(t)
	u := newUser(t, sb)
	k := newSigners(t, u)
	if _, errOut, code := u.run("policy", "--approvals", "1"); code != 0 {
		t.Fatal(errOut)
	}
	dir := filepath.Join(realDir(t, u), "payroll")
	if err := os.MkdirAll(filepath.Join(dir, "inbox"), 0o750); err != nil {
		t.Fatal(err)
	}
	copyFile(t, samplePath(t), filepath.Join(dir, "inbox", "november.csv"))
	for range 2 {
		expectExit5(t, u, "", "watch", "--once", "--settle", "0", dir)
	}
	waiting := filepath.Join(dir, "awaiting-approval", "november.csv")
	note, err := os.ReadFile(waiting + ".why.txt")
	if err != nil || !strings.Contains(string(note), "payout approve "+waiting) || !strings.Contains(string(note), "needs 1 distinct signers; have 0") ||
		!strings.Contains(string(note), "(at most 7 days ahead)") {
		t.Fatalf("note beside the waiting file (%v):\n%s", err, note)
	}
	if _, errOut, code := u.run("watch", "--once", "--settle", "0", "--require-approval=false", dir); code != 2 || !strings.Contains(errOut, "approval policy is in the ledger") {
		t.Fatalf("watch --require-approval=false: exit %d, want 2: %s", code, errOut)
	}
	if out, errOut, code := u.run("approve", "--key", k.alice.Path, waiting); code != 0 {
		t.Fatalf("approve: exit %d\n%s%s", code, out, errOut)
	}
	// An allowed_signers file that others could write is refused: nothing is paid.
	if err := os.Chmod(k.allowed, 0o666); err != nil {
		t.Fatal(err)
	}
	expectExit5(t, u, "chmod go-w", "watch", "--once", "--settle", "0", dir)
	if err := os.Chmod(k.allowed, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := u.run("watch", "--once", "--settle", "0", dir); code != 0 {
		t.Fatalf("watch after the signature: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "done", "november.csv.alice.sig")); err != nil {
		t.Errorf("the signature did not move along with the file: %v", err)
	}
	if n := sb.Stats().Creates; n != 50 {
		t.Errorf("service created %d payouts, want 50", n)
	}

	// A signed refusal moves a waiting file to failed.
	december := filepath.Join(dir, "awaiting-approval", "december.csv")
	if err := os.WriteFile(filepath.Join(dir, "inbox", "december.csv"), []byte("external_invoice_ref,recipient_reference,bank,third_party_account_no,amount\n"+
		"DEC-1,Tan Wei Ming,Maybank,0123456789,10.00\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	expectExit5(t, u, "", "watch", "--once", "--settle", "0", dir)
	if out, errOut, code := u.run("reject", "--key", k.bob.Path, "--reason", "duplicate of November", december); code != 0 {
		t.Fatalf("reject: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := u.run("watch", "--once", "--settle", "0", dir); code != 3 {
		t.Fatalf("watch after the refusal: exit %d, want 3: %s", code, errOut)
	}
	if why, err := os.ReadFile(filepath.Join(dir, "failed", "december.csv.why.txt")); err != nil || !strings.Contains(string(why), "duplicate of November") {
		t.Errorf("failed note (%v):\n%s", err, why)
	}
}

// TestCommandPlanNamesTheBanks: the statement names each row's bank by its provider id; whoever
// signs it reads the banks' names next to those ids, from `payout plan` (on stderr: stdout is
// the statement alone, as it is piped to ssh-keygen) and from `payout approve`.
func TestCommandPlanNamesTheBanks(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	k := newSigners(t, u)
	if out, errOut, code := u.run("template", "--example", "--out", "payroll.csv"); code != 0 {
		t.Fatalf("template: exit %d: %s %s", code, out, errOut)
	}
	out, errOut, code := u.run("plan", "payroll.csv")
	if code != 0 || strings.Contains(out, "Maybank") {
		t.Fatalf("plan: exit %d, stdout holds more than the statement:\n%s", code, out)
	}
	for _, want := range []string{"1  Maybank (Malayan Banking Berhad)", "51  Touch 'n Go eWallet"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("plan does not name the bank %q beside the statement:\n%s", want, errOut)
		}
	}
	out, errOut, code = u.run("approve", "--key", k.alice.Path, "payroll.csv")
	if code != 0 || !strings.Contains(out, "2  CIMB Bank Berhad") {
		t.Errorf("approve: exit %d, does not name the banks of the plan it signs:\n%s%s", code, out, errOut)
	}
}

// TestCommandResavedFileSaysWhatChanged: a signed CSV saved again with CRLF line endings (as a
// spreadsheet on Windows writes it) pays nothing, and says that the signature signs the same
// rows with the file's old line endings: what changed, and that no row did.
func TestCommandResavedFileSaysWhatChanged(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	k := newSigners(t, u)
	if out, errOut, code := u.run("policy", "--approvals", "1"); code != 0 {
		t.Fatalf("policy --approvals 1: exit %d: %s %s", code, out, errOut)
	}
	path := filepath.Join(u.dir, "payroll.csv")
	if out, errOut, code := u.run("template", "--example", "--out", path); code != 0 {
		t.Fatalf("template: exit %d: %s %s", code, out, errOut)
	}
	if out, errOut, code := u.run("approve", "--key", k.alice.Path, path); code != 0 {
		t.Fatalf("approve: exit %d: %s %s", code, out, errOut)
	}
	data, err := os.ReadFile(path)
	if err != nil || bytes.Contains(data, []byte("\r\n")) {
		t.Fatalf("the template is not LF text: %v", err)
	}
	if err := os.WriteFile(path, bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	expectExit5(t, u, "saved again with CRLF (Windows) line endings where it had LF", "run", path)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := u.run("run", path); code != 0 {
		t.Errorf("the file as signed: exit %d: %s %s", code, out, errOut)
	}
}

// TestCommandWatchDoesNotCountTheMakerOfAConsoleDrop: a file the web console recorded as dropped
// by alice (reports/<sha256>.dropped-by.txt, which only the service account writes) is not
// approved by alice's own signature, made as any signature is: folder mode counts it out, says
// why, and pays the file once someone else signs.
func TestCommandWatchDoesNotCountTheMakerOfAConsoleDrop(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	u := newUser(t, sb)
	k := newSigners(t, u)
	if _, errOut, code := u.run("policy", "--approvals", "1"); code != 0 {
		t.Fatal(errOut)
	}
	dir := filepath.Join(realDir(t, u), "payroll")
	for _, sub := range []string{"inbox", "reports"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	dropped := filepath.Join(dir, "inbox", "november.csv")
	copyFile(t, samplePath(t), dropped)
	sum, err := read.FileSHA256(dropped)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "reports", sum+".dropped-by.txt"), []byte("alice\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	expectExit5(t, u, "", "watch", "--once", "--settle", "0", dir)
	waiting := filepath.Join(dir, "awaiting-approval", "november.csv")
	if out, errOut, code := u.run("approve", "--key", k.alice.Path, waiting); code != 0 {
		t.Fatalf("approve: exit %d\n%s%s", code, out, errOut)
	}
	expectExit5(t, u, "", "watch", "--once", "--settle", "0", dir)
	if note, err := os.ReadFile(waiting + ".why.txt"); err != nil || !strings.Contains(string(note), "alice dropped this file") {
		t.Fatalf("the note does not say the maker's signature was not counted (%v):\n%s", err, note)
	}
	if n := sb.Stats().Creates; n != 0 {
		t.Fatalf("the maker's own signature paid %d payouts", n)
	}
	if out, errOut, code := u.run("approve", "--key", k.bob.Path, waiting); code != 0 {
		t.Fatalf("approve: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := u.run("watch", "--once", "--settle", "0", dir); code != 0 {
		t.Fatalf("watch after another's signature: exit %d\n%s%s", code, out, errOut)
	}
	if n := sb.Stats().Creates; n != 50 {
		t.Errorf("service created %d payouts, want 50", n)
	}
}
