package main_test

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/payout/payout/batch/signature/signaturetest"
)

// TestConsoleAcceptsHeldRepeats: November is paid; alice drops December, whose every row repeats
// a November payout, through the console; folder mode holds it in awaiting-approval. The review
// page says so and offers to accept the repeats. alice, who dropped it, is refused; a request
// without the CSRF token is refused; bob accepts them with his passkey, as a payout-repeat
// signature of the plan with its repeats paid (FILE.bob.repeats.sig, which ssh-keygen -Y verify
// accepts), recorded first as bob's event in the ledger's chain; folder mode's next pass pays the
// whole file. rita, who may only read, downloads the run's evidence pack from the auditors' page,
// and `payout audit verify --pack` finds it intact.
func TestConsoleAcceptsHeldRepeats(t *testing.T) {
	t.Parallel() // a ledger, a sandbox, a console and a browser of its own
	sb := newSandbox(t)
	u := newUser(t, sb)
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(t.TempDir(), "allowed_signers"), "# nobody yet")
	u.env = append(u.env, "PAYOUT_ALLOWED_SIGNERS="+allowed)
	if _, errOut, code := u.run("run", samplePath(t)); code != 0 {
		t.Fatalf("paying November: exit %d\n%s", code, errOut)
	}
	paid := sb.Stats().Creates
	folder := filepath.Join(u.dir, "drop")
	if err := os.MkdirAll(filepath.Join(folder, "inbox"), 0o750); err != nil {
		t.Fatal(err)
	}
	november, err := os.ReadFile(samplePath(t))
	if err != nil {
		t.Fatal(err)
	}
	december := filepath.Join(t.TempDir(), "december.csv")
	if err := os.WriteFile(december, []byte(strings.ReplaceAll(string(november), "PAY-2026-11-", "PAY-2026-12-")), 0o644); err != nil {
		t.Fatal(err)
	}

	origin := startConsole(t, u, folder)
	c := newBrowser(t, origin)
	var lines []string
	for _, name := range []string{"alice", "bob"} {
		lines = append(lines, strings.Replace(c.register(name), `namespaces="payout-plan,payout-reject"`, `namespaces="payout-plan,payout-reject,payout-repeat"`, 1))
	}
	// rita audits: she reads, and signs nothing.
	lines = append(lines, strings.Replace(c.register("rita"), `namespaces="payout-plan,payout-reject"`, `namespaces="payout-read"`, 1))
	signaturetest.WriteAllowedSigners(t, allowed, lines...)

	c.holdPasskeysOf("alice")
	if got := c.signIn(); got != "FILES" {
		t.Fatalf("alice signs in: %q", got)
	}
	c.do(chromedp.Navigate(origin+"/files"), chromedp.SetUploadFiles(chromedp.ID("file"), []string{december}), chromedp.Click(chromedp.ID("drop")))
	c.await(`document.querySelector('tr[data-file="december.csv"][data-folder="inbox"]') && 'dropped'`)
	expectExit5(t, u, "", "watch", "--once", "--settle", "0", folder)
	waiting := filepath.Join(folder, "awaiting-approval", "december.csv")
	review := origin + "/review?folder=awaiting-approval&file=december.csv"
	c.do(chromedp.Navigate(review))
	if held := c.await(`document.getElementById('held') && document.getElementById('held').innerText`); !strings.Contains(held, "held as possible repeats") {
		t.Errorf("the review of a held file: %q", held)
	}
	c.do(chromedp.Click(chromedp.ID("repeats")))
	if got := c.await(pageOutcome); !strings.Contains(got, "You dropped this file") {
		t.Errorf("alice accepting the repeats of the file she dropped: %q, want it refused", got)
	}
	aliceCookie := c.sessionCookie()
	if code, _ := c.request("POST", "/sign/begin", aliceCookie, strings.NewReader(`{"folder":"awaiting-approval","file":"december.csv","decision":"repeats"}`), "application/json"); code != 403 {
		t.Errorf("accepting repeats without the CSRF token: %d, want 403", code)
	}
	c.signOut()

	c.holdPasskeysOf("bob")
	if got := c.signIn(); got != "FILES" {
		t.Fatalf("bob signs in: %q", got)
	}
	c.do(chromedp.Navigate(review))
	c.await(`document.getElementById('repeats') && 'shown'`)
	c.do(chromedp.Click(chromedp.ID("repeats")))
	if got := c.await(pageOutcome); got != "FILES" {
		t.Fatalf("bob accepts the repeats: %q", got)
	}
	sig, err := os.ReadFile(waiting + ".bob.repeats.sig")
	if err != nil {
		t.Fatalf("bob's acceptance: %v", err)
	}
	plan, errOut, code := u.run("plan", "--allow-repeats", waiting)
	if code != 0 {
		t.Fatalf("plan --allow-repeats: exit %d: %s", code, errOut)
	}
	if out, err := signaturetest.Verify(t, allowed, "bob", "payout-repeat", sig, []byte(plan)); err != nil {
		t.Errorf("ssh-keygen -Y verify of bob's acceptance made in the browser: %v: %s", err, out)
	}
	if out, errOut, code := u.run("watch", "--once", "--settle", "0", folder); code != 0 {
		t.Fatalf("watch after bob accepted the repeats: exit %d\n%s%s", code, out, errOut)
	}
	if n := sb.Stats().Creates; n != paid+50 {
		t.Errorf("bob's acceptance sent %d payouts, want December's 50", n-paid)
	}
	if who, err := os.ReadFile(filepath.Join(folder, "done", "december.csv.repeats-accepted.txt")); err != nil || !strings.Contains(string(who), "bob: signature file december.csv.bob.repeats.sig") {
		t.Errorf("who accepted the repeats, beside the paid file (%v):\n%s", err, who)
	}

	db, err := sql.Open("sqlite", filepath.Join(u.dir, "payout-ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var facts string
	if err := db.QueryRow(`SELECT facts FROM events WHERE ref = '' AND to_state = 'CONSOLE-REPEATS-ACCEPTED'`).Scan(&facts); err != nil {
		t.Fatalf("no event of the acceptance in the ledger: %v", err)
	}
	var f map[string]string
	if err := json.Unmarshal([]byte(facts), &f); err != nil || f["principal"] != "bob" || f["namespace"] != "payout-repeat" || f["sig_file"] != "december.csv.bob.repeats.sig" {
		t.Errorf("the acceptance's event: %s (%v)", facts, err)
	}
	if out, errOut, code := u.run("audit", "verify"); code != 0 {
		t.Errorf("audit verify after the acceptance: exit %d\n%s%s", code, out, errOut)
	}
	c.signOut()

	// rita, a reader, downloads December's evidence pack from the auditors' page: it checks out.
	c.holdPasskeysOf("rita")
	if got := c.signIn(); got != "FILES" {
		t.Fatalf("rita signs in: %q", got)
	}
	c.do(chromedp.Navigate(origin + "/audit"))
	pack := c.eval(`(function () { var rows = document.querySelectorAll('#runs tr[data-run]'); for (var i = 0; i < rows.length; i++) {
		if (rows[i].innerText.indexOf('december.csv') >= 0) { return rows[i].querySelector('a.pack').getAttribute('href'); } } return ''; })()`)
	if !strings.HasPrefix(pack, "/audit/pack?run=") {
		t.Fatalf("the audit page offers rita no pack of December's run:\n%s", c.eval(`document.getElementById('runs').innerText`))
	}
	ritaCookie := c.sessionCookie()
	code, zip := c.request("GET", pack, ritaCookie, nil, "")
	if code != 200 || !strings.HasPrefix(zip, "PK") {
		t.Fatalf("rita downloads %s: %d %.200q", pack, code, zip)
	}
	packFile := filepath.Join(t.TempDir(), "december.zip")
	if err := os.WriteFile(packFile, []byte(zip), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := u.run("audit", "verify", "--pack", packFile); code != 0 || !strings.Contains(out, "intact") {
		t.Errorf("audit verify --pack of the pack rita downloaded: exit %d\n%s%s", code, out, errOut)
	}
	c.signOut()
	if code, _ := c.request("GET", pack, ritaCookie, nil, ""); code != 401 {
		t.Errorf("the pack after rita signed out: %d, want 401", code)
	}
}
