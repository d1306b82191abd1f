package main_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/payout/payout/batch/report/reporttest"
	"github.com/payout/payout/batch/signature/signaturetest"
)

// scriptPayee is a payee name that a page showing it as markup would run.
const scriptPayee = `<script>document.title='owned'</script>`

// console is a `payout serve` the test started, and the browser that uses it.
type console struct {
	t        *testing.T
	origin   string
	browser  context.Context
	authID   webauthn.AuthenticatorID
	passkeys map[string][]*webauthn.Credential // each person's, as their authenticator holds them
}

// startConsole runs `payout serve` on loopback for dir, as user u, and returns its origin.
func startConsole(t *testing.T, u *user, dir string, flags ...string) string {
	t.Helper()
	_, origin := startConsoleHost(t, u, dir, flags...)
	return origin
}

// startConsoleHost is startConsole that also returns the address the console listens on, which
// differs from its origin's behind a proxy.
func startConsoleHost(t *testing.T, u *user, dir string, flags ...string) (addr, origin string) {
	t.Helper()
	cmd := exec.Command(binPath, append(append([]string{"serve", "--listen", "127.0.0.1:0"}, flags...), dir)...)
	cmd.Dir, cmd.Env = u.dir, u.env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	lines := bufio.NewScanner(stderr)
	listening := regexp.MustCompile(`console listening on (\S+) for (https?://\S+)`)
	for lines.Scan() {
		if m := listening.FindStringSubmatch(lines.Text()); m != nil {
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			return m[1], m[2]
		}
		t.Logf("serve: %s", lines.Text())
	}
	t.Fatalf("payout serve stopped before it listened: %v", lines.Err())
	return "", ""
}

// newBrowser starts headless Chromium, in a profile of its own, for the console at origin.
func newBrowser(t *testing.T, origin string) *console {
	t.Helper()
	path := reporttest.NeedTool(t, "chromium", "chromium", "chromium-browser")
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("window-size", "1280,900"), chromedp.Env("HOME="+t.TempDir()))
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	c := &console{t: t, origin: origin, browser: ctx, passkeys: map[string][]*webauthn.Credential{}}
	// The first action starts the browser, which lives as long as its context: no timeout here.
	if err := chromedp.Do(ctx, chromedp.Navigate(origin+"/")); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if _, err := chromedp.Run(ctx, cdpCall(webauthn.Enable, webauthn.EnableParams{})); err != nil {
		t.Fatalf("WebAuthn.enable: %v", err)
	}
	return c
}

func cdpCall[P, R any](cmd cdp.Command[P, R], params P) chromedp.Action[R] {
	return func(ctx context.Context, t *chromedp.Target) (R, error) { return cdp.Call(ctx, t, cmd, params) }
}

func (c *console) do(steps ...chromedp.Action[chromedp.Void]) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.browser, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		c.t.Fatalf("browser: %v", err)
	}
}

// holdPasskeysOf gives the browser the authenticator of name, a person's phone or laptop: a
// virtual CTAP2 platform authenticator with resident keys that verifies its user, holding the
// passkeys name registered.
func (c *console) holdPasskeysOf(name string) {
	c.t.Helper()
	if c.authID != "" {
		if _, err := chromedp.Run(c.browser, cdpCall(webauthn.RemoveVirtualAuthenticator, webauthn.RemoveVirtualAuthenticatorParams{AuthenticatorID: c.authID})); err != nil {
			c.t.Fatal(err)
		}
	}
	res, err := chromedp.Run(c.browser, cdpCall(webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
		Protocol: webauthn.AuthenticatorProtocolCtap2, Transport: webauthn.AuthenticatorTransportInternal,
		HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true,
	}}))
	if err != nil {
		c.t.Fatalf("WebAuthn.addVirtualAuthenticator: %v", err)
	}
	c.authID = res.AuthenticatorID
	for _, cred := range c.passkeys[name] {
		// Only what a passkey is, by hand: cdproto sends generateCmtgKeyOnNextOperation always,
		// which this Chromium refuses.
		passkey := map[string]any{"credentialId": cred.CredentialID, "isResidentCredential": cred.IsResidentCredential, "rpId": cred.RpID,
			"privateKey": cred.PrivateKey, "userHandle": cred.UserHandle, "signCount": cred.SignCount}
		add := func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
			return chromedp.Void{}, t.Call(ctx, webauthn.CommandAddCredential, map[string]any{"authenticatorId": c.authID, "credential": passkey}, nil)
		}
		if _, err := chromedp.Run(c.browser, add); err != nil {
			c.t.Fatalf("WebAuthn.addCredential: %v", err)
		}
	}
}

// eval runs expression in the page and returns its value as text.
func (c *console) eval(expression string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.browser, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expression, chromedp.EvalAwaitPromise))
	if err != nil {
		c.t.Fatalf("evaluate %s: %v", expression, err)
	}
	return v
}

// await polls expression until it gives a non-empty text, across page loads, for up to a minute.
func (c *console) await(expression string) string {
	c.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(c.browser, 5*time.Second)
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string]("(function(){try{return String(("+expression+")||'')}catch(e){return ''}})()"))
		cancel()
		if err == nil && v != "" {
			return v
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatalf("the page never showed %s; it shows:\n%s", expression, c.eval("document.body.innerText"))
	return ""
}

// pageOutcome is what the page says once the script's request is answered: the next page, or an error.
const pageOutcome = `location.pathname === '/files' ? 'FILES' : (document.getElementById('status') && !document.getElementById('status').textContent.startsWith('Touch') && document.getElementById('status').textContent)`

// register registers a passkey for name on a new authenticator and returns the allowed_signers line shown.
func (c *console) register(name string) string {
	c.t.Helper()
	c.holdPasskeysOf(name)
	c.do(chromedp.Navigate(c.origin+"/register"), chromedp.SetValue(chromedp.ID("name"), name), chromedp.Click(chromedp.ID("register")))
	line := c.await(`document.getElementById('allowed-line').textContent || (document.getElementById('status').textContent.startsWith('Touch') ? '' : 'STATUS ' + document.getElementById('status').textContent)`)
	if !strings.HasPrefix(line, name+" ") {
		c.t.Fatalf("registering %s: %s", name, line)
	}
	res, err := chromedp.Run(c.browser, cdpCall(webauthn.GetCredentials, webauthn.GetCredentialsParams{AuthenticatorID: c.authID}))
	if err != nil || len(res.Credentials) != 1 {
		c.t.Fatalf("WebAuthn.getCredentials after registering %s: %v, %d credentials", name, err, len(res.Credentials))
	}
	c.passkeys[name] = res.Credentials
	return line
}

// signIn signs in with the authenticator's passkey and returns what the page says.
func (c *console) signIn() string {
	c.t.Helper()
	c.do(chromedp.Navigate(c.origin+"/"), chromedp.Click(chromedp.ID("signin")))
	return c.await(pageOutcome)
}

func (c *console) signOut() {
	c.t.Helper()
	c.do(chromedp.Navigate(c.origin+"/files"), chromedp.Click(chromedp.ID("signout")))
	c.await(`location.pathname === '/' && document.getElementById('signin') && 'out'`)
}

// sessionCookie is the console's session cookie as the browser holds it.
func (c *console) sessionCookie() *http.Cookie {
	c.t.Helper()
	res, err := chromedp.Run(c.browser, cdpCall(network.GetCookies, network.GetCookiesParams{URLs: []string{c.origin + "/"}}))
	if err != nil {
		c.t.Fatal(err)
	}
	for _, ck := range res.Cookies {
		if strings.Contains(ck.Name, "payout-console") {
			if !ck.HTTPOnly || ck.SameSite != network.CookieSameSiteStrict {
				c.t.Errorf("session cookie %s: HttpOnly %v, SameSite %q: want HttpOnly and Strict", ck.Name, ck.HTTPOnly, ck.SameSite)
			}
			return &http.Cookie{Name: ck.Name, Value: ck.Value}
		}
	}
	c.t.Fatal("the browser holds no session cookie of the console")
	return nil
}

// TestConsoleInChromium: four people register passkeys; the administrator lists three as
// signers and one as a reader; a file whose payee name carries a script is dropped through the
// page, awaits approval, is refused to its maker and to the reader, approved by two others with
// their passkeys, and paid by folder mode. The .sig files the browser made pass ssh-keygen -Y
// verify. Attacks are refused: a POST without the CSRF token, a cookie replayed after sign-out,
// an upload over the limit, a person approving twice.
func TestConsoleInChromium(t *testing.T) {
	t.Parallel() // a ledger, a sandbox, a console and a browser of its own
	sb := newSandbox(t)
	u := newUser(t, sb)
	keys := t.TempDir()
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(keys, "allowed_signers"), "# the finance team's signers")
	u.env = append(u.env, "PAYOUT_ALLOWED_SIGNERS="+allowed)
	if _, errOut, code := u.run("policy", "--approvals", "2"); code != 0 {
		t.Fatalf("policy --approvals 2: exit %d: %s", code, errOut)
	}
	folder := filepath.Join(u.dir, "drop")
	if err := os.MkdirAll(filepath.Join(folder, "inbox"), 0o750); err != nil {
		t.Fatal(err)
	}
	sample, err := os.ReadFile(samplePath(t))
	if err != nil {
		t.Fatal(err)
	}
	payroll := filepath.Join(t.TempDir(), "payroll-nov.csv")
	if err := os.WriteFile(payroll, bytes.Replace(sample, []byte("Ahmad Faizal bin Ismail"), []byte(scriptPayee), 1), 0o644); err != nil {
		t.Fatal(err)
	}

	origin := startConsole(t, u, folder, "--max-upload", "1048576")
	c := newBrowser(t, origin)
	lines := map[string]string{}
	for _, name := range []string{"alice", "bob", "carol", "rita"} {
		lines[name] = c.register(name)
		if !strings.Contains(lines[name], `namespaces="payout-plan,payout-reject" sk-ecdsa-sha2-nistp256@openssh.com AAAA`) {
			t.Fatalf("%s's line: %s", name, lines[name])
		}
	}
	// rita's passkey is the authenticator now: she cannot sign in before her line is listed.
	if got := c.signIn(); !strings.Contains(got, "not among the allowed signers") {
		t.Fatalf("sign-in before the administrator listed the passkey: %q", got)
	}
	reader := strings.Replace(lines["rita"], `namespaces="payout-plan,payout-reject"`, `namespaces="payout-read"`, 1)
	signaturetest.WriteAllowedSigners(t, allowed, lines["alice"], lines["bob"], lines["carol"], reader)

	if got := c.signIn(); got != "FILES" {
		t.Fatalf("rita signs in: %q", got)
	}
	c.do(chromedp.Navigate(origin + "/files"))
	if who := c.eval(`document.querySelector('.who').textContent`); !strings.Contains(who, "rita") || !strings.Contains(who, "reads") {
		t.Errorf("rita's header: %q, want her name as a reader", who)
	}
	ritaCookie := c.sessionCookie()
	c.signOut()
	if code, body := c.request("GET", "/files", ritaCookie, nil, ""); code != http.StatusUnauthorized || !strings.Contains(body, "not signed in") {
		t.Errorf("rita's cookie replayed after she signed out: %d, want 401 saying she is not signed in", code)
	}

	// alice drops the file through the page.
	c.holdPasskeysOf("alice")
	if got := c.signIn(); got != "FILES" {
		t.Fatalf("alice signs in: %q", got)
	}
	// A page of its own, loaded whole: the sign-in's own navigation may still be replacing the
	// document the upload's node is looked up in.
	c.do(chromedp.Navigate(origin+"/files"), chromedp.SetUploadFiles(chromedp.ID("file"), []string{payroll}), chromedp.Click(chromedp.ID("drop")))
	c.await(`document.querySelector('tr[data-file="payroll-nov.csv"][data-folder="inbox"]') && 'dropped'`)
	if _, err := os.Stat(filepath.Join(folder, "inbox", "payroll-nov.csv")); err != nil {
		t.Fatalf("the dropped file is not in the inbox: %v", err)
	}
	aliceCookie, csrf := c.sessionCookie(), c.eval(`document.querySelector('meta[name="csrf"]').content`)
	if code, _ := c.request("POST", "/signout", aliceCookie, strings.NewReader(""), ""); code != http.StatusForbidden {
		t.Errorf("a cross-site sign-out without the CSRF token: %d, want 403", code)
	}
	if code, _ := c.upload(aliceCookie, "", "forged.csv", sample); code != http.StatusForbidden {
		t.Errorf("a cross-site upload without the CSRF token: %d, want 403", code)
	}
	if code, _ := c.upload(aliceCookie, csrf, "big.csv", bytes.Repeat([]byte("x"), 2<<20)); code != http.StatusRequestEntityTooLarge {
		t.Errorf("an upload of 2 MiB over a 1 MiB limit: %d, want 413", code)
	}
	for _, name := range []string{"forged.csv", "big.csv"} {
		if _, err := os.Stat(filepath.Join(folder, "inbox", name)); err == nil {
			t.Errorf("%s reached the inbox", name)
		}
	}
	if code, _ := c.request("GET", "/files", aliceCookie, nil, ""); code != http.StatusOK {
		t.Errorf("alice's session after the refused requests: %d, want 200", code)
	}

	expectExit5(t, u, "", "watch", "--once", "--settle", "0", folder)
	review := origin + "/review?folder=awaiting-approval&file=payroll-nov.csv"
	c.do(chromedp.Navigate(review))
	c.await(`document.getElementById('rows') && 'shown'`)
	if got := c.eval(`Array.from(document.querySelectorAll('td.payee')).map(function(e){return e.textContent}).join('|')`); !strings.Contains(got, scriptPayee) {
		t.Errorf("the payee carrying a script is not shown as its text: %.200s", got)
	}
	if title, scripts := c.eval(`document.title`), c.eval(`String(document.scripts.length)`); strings.Contains(title, "owned") || scripts != "1" {
		t.Errorf("the payee's script ran or was inserted: title %q, %s scripts", title, scripts)
	}
	if got := c.approve(); !strings.Contains(got, "You dropped this file") {
		t.Errorf("the maker approving her own file: %q, want it refused", got)
	}
	c.signOut()

	c.holdPasskeysOf("rita")
	if got := c.signIn(); got != "FILES" {
		t.Fatalf("rita signs in again: %q", got)
	}
	c.do(chromedp.Navigate(review))
	c.await(`document.getElementById('rows') && 'shown'`)
	if c.eval(`String(!!document.getElementById('approve'))`) != "false" {
		t.Error("the review page offers a reader to approve")
	}
	forced := c.eval(`fetch('/sign/begin', {method: 'POST', headers: {'Content-Type': 'application/json', 'Accept': 'application/json',
		'X-CSRF-Token': document.querySelector('meta[name="csrf"]').content},
		body: JSON.stringify({folder: 'awaiting-approval', file: 'payroll-nov.csv', decision: 'approve'})}).then(function (r) { return r.text().then(function (b) { return r.status + ' ' + b; }); })`)
	if !strings.HasPrefix(forced, "403 ") || !strings.Contains(forced, "payout-plan") {
		t.Errorf("a reader forcing an approval: %s, want 403 naming the namespace she lacks", forced)
	}
	c.signOut()

	for _, name := range []string{"bob", "carol"} {
		c.holdPasskeysOf(name)
		if got := c.signIn(); got != "FILES" {
			t.Fatalf("%s signs in: %q", name, got)
		}
		c.do(chromedp.Navigate(review))
		c.await(`document.getElementById('approve') && 'shown'`)
		if got := c.approve(); got != "FILES" {
			t.Fatalf("%s approves: %q", name, got)
		}
		if name == "bob" {
			c.do(chromedp.Navigate(review))
			c.await(`document.getElementById('approve') && 'shown'`)
			if got := c.approve(); !strings.Contains(got, "approved this file already") {
				t.Errorf("bob approving twice: %q, want it refused", got)
			}
		}
		c.signOut()
	}

	plan, errOut, code := u.run("plan", filepath.Join(folder, "awaiting-approval", "payroll-nov.csv"))
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errOut)
	}
	for _, name := range []string{"bob", "carol"} {
		sig, err := os.ReadFile(filepath.Join(folder, "awaiting-approval", "payroll-nov.csv."+name+".sig"))
		if err != nil {
			t.Fatalf("%s's approval: %v", name, err)
		}
		if out, err := signaturetest.Verify(t, allowed, name, "payout-plan", sig, []byte(plan)); err != nil {
			t.Errorf("ssh-keygen -Y verify of %s's approval made in the browser: %v: %s", name, err, out)
		}
	}
	if out, errOut, code := u.run("watch", "--once", "--settle", "0", folder); code != 0 {
		t.Fatalf("watch with two passkey approvals: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(folder, "done", "payroll-nov.csv")); err != nil {
		t.Fatalf("the approved file is not in done: %v", err)
	}

	c.holdPasskeysOf("alice")
	if got := c.signIn(); got != "FILES" {
		t.Fatalf("alice signs in again: %q", got)
	}
	for _, width := range []int64{1280, 390} {
		c.fits(width, "/files", "/review?folder=done&file=payroll-nov.csv", "/audit", "/register")
	}
	c.do(chromedp.Navigate(origin + "/review?folder=done&file=payroll-nov.csv"))
	if got := c.eval(`document.getElementById('summary').textContent`); !strings.Contains(got, "50 payouts, MYR 302,279.94;") {
		t.Errorf("the review's summary: %q, want the sample's 50 payouts and total", got)
	}
	c.do(chromedp.Navigate(origin + "/files"))
	report := c.await(`(document.querySelector('tr[data-file="payroll-nov.csv"][data-folder="done"] a[href$=".report.html"]') || {}).href`)
	c.do(chromedp.Navigate(report))
	if got := c.await(`document.body && document.body.innerText`); !strings.Contains(got, "payroll-nov.csv") {
		t.Errorf("the report shown inline does not name its file: %.300s", got)
	}

	// A second file, refused by carol with her passkey: nothing of it is paid.
	vendors := filepath.Join(t.TempDir(), "vendors.csv")
	if _, errOut, code := u.run("template", "--example", "--out", vendors); code != 0 {
		t.Fatalf("template --example: exit %d: %s", code, errOut)
	}
	c.do(chromedp.Navigate(origin+"/files"), chromedp.SetUploadFiles(chromedp.ID("file"), []string{vendors}), chromedp.Click(chromedp.ID("drop")))
	c.await(`document.querySelector('tr[data-file="vendors.csv"][data-folder="inbox"]') && 'dropped'`)
	c.signOut()
	expectExit5(t, u, "", "watch", "--once", "--settle", "0", folder)
	c.holdPasskeysOf("carol")
	if got := c.signIn(); got != "FILES" {
		t.Fatalf("carol signs in again: %q", got)
	}
	c.do(chromedp.Navigate(origin+"/review?folder=awaiting-approval&file=vendors.csv"), chromedp.SetValue(chromedp.ID("reason"), "not our vendors"),
		chromedp.Click(chromedp.ID("refuse")))
	if got := c.await(pageOutcome); got != "FILES" {
		t.Fatalf("carol refuses: %q", got)
	}
	refusal := filepath.Join(folder, "awaiting-approval", "vendors.csv.carol.reject")
	statement, err := os.ReadFile(refusal)
	if err != nil || !strings.Contains(string(statement), "not our vendors") {
		t.Fatalf("carol's refusal statement: %v\n%s", err, statement)
	}
	sig, err := os.ReadFile(refusal + ".sig")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := signaturetest.Verify(t, allowed, "carol", "payout-reject", sig, statement); err != nil {
		t.Errorf("ssh-keygen -Y verify of carol's refusal made in the browser: %v: %s", err, out)
	}
	if out, errOut, code := u.run("watch", "--once", "--settle", "0", folder); code == 0 || !strings.Contains(out+errOut, "REJECTED") {
		t.Errorf("watch with a signed refusal: exit %d, want the file refused\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(folder, "failed", "vendors.csv")); err != nil {
		t.Errorf("the refused file is not in failed: %v", err)
	}
	// December's file under November's name: new references, every amount a ringgit more, and
	// one account changed. The review shows the account, and only it.
	november, err := os.ReadFile(payroll)
	if err != nil {
		t.Fatal(err)
	}
	december := bytes.ReplaceAll(november, []byte("PAY-2026-11-"), []byte("PAY-2026-12-"))
	december = regexp.MustCompile(`(\d)\.(\d\d)(,|"|\r?\n)`).ReplaceAllFunc(december, func(m []byte) []byte {
		return append([]byte{m[0], '.', '9', '9'}, m[4:]...)
	})
	december = bytes.Replace(december, []byte("131860913909"), []byte("131860999999"), 1)
	decemberPath := filepath.Join(t.TempDir(), "payroll-nov.csv")
	if err := os.WriteFile(decemberPath, december, 0o644); err != nil {
		t.Fatal(err)
	}
	c.do(chromedp.Navigate(origin+"/files"), chromedp.SetUploadFiles(chromedp.ID("file"), []string{decemberPath}), chromedp.Click(chromedp.ID("drop")))
	c.await(`document.querySelector('tr[data-file="payroll-nov.csv"][data-folder="inbox"]') && 'dropped'`)
	expectExit5(t, u, "", "watch", "--once", "--settle", "0", folder)
	// Folder mode has seen the name: it keeps the file under the name with the time added.
	c.do(chromedp.Navigate(origin + "/files"))
	waiting := c.await(`(document.querySelector('tr[data-folder="awaiting-approval"][data-file^="payroll-nov."]') || {dataset: {}}).dataset.file`)
	c.do(chromedp.Navigate(origin + "/review?folder=awaiting-approval&file=" + url.QueryEscape(waiting)))
	if by := c.eval(`document.querySelector('p.state').textContent`); !strings.Contains(by, "dropped by carol") {
		t.Errorf("the renamed file's maker: %q, want carol", by)
	}
	if got := c.approve(); !strings.Contains(got, "You dropped this file") {
		t.Errorf("carol approving the file she dropped, renamed by folder mode: %q, want it refused", got)
	}
	changed := c.await(`document.getElementById('changes') && document.getElementById('changes').innerText`)
	if !strings.Contains(changed, "What changed since payroll-nov.csv was paid") || !strings.Contains(changed, "Nurul Aisyah binti Rahman") ||
		!strings.Contains(changed, "131860913909") || !strings.Contains(changed, "131860999999") {
		t.Errorf("the review of a file whose one account changed does not show it:\n%s", changed)
	}
	if n := c.eval(`String(document.querySelectorAll('#account-changed tbody tr').length)`); n != "1" {
		t.Errorf("%s accounts shown as changed, want 1:\n%s", n, changed)
	}
	for _, id := range []string{"new-payees", "amount-moved", "gone"} {
		if c.eval(`String(!!document.getElementById('`+id+`'))`) != "false" {
			t.Errorf("the review shows %s for a file with none:\n%s", id, changed)
		}
	}

	// The auditors' page: the policy, the runs, and the chain checked on request.
	c.do(chromedp.Navigate(origin + "/audit"))
	if got := c.eval(`document.getElementById('policy').innerText + document.getElementById('runs').innerText`); !strings.Contains(got, "needs 2 signature(s)") || !strings.Contains(got, "payroll-nov.csv") {
		t.Errorf("the audit page:\n%s\nwant the policy of 2 signers and the paid file's run", got)
	}
	c.do(chromedp.Click(chromedp.ID("verify")))
	if got := c.await(`document.getElementById('verified') && document.getElementById('verified').textContent`); !strings.Contains(got, "The chain is intact") {
		t.Errorf("the chain check from the audit page: %s", got)
	}

	checkConsoleTrail(t, u, map[string]string{
		"bob payout-plan":     filepath.Join(folder, "done", "payroll-nov.csv.bob.sig"),
		"carol payout-plan":   filepath.Join(folder, "done", "payroll-nov.csv.carol.sig"),
		"carol payout-reject": filepath.Join(folder, "failed", "vendors.csv.carol.reject.sig"),
	}, "alice", "bob", "carol", "rita")
	for ref, n := range sb.CreateCounts() {
		if strings.HasPrefix(ref, "EXAMPLE-") {
			t.Errorf("%s of the refused file reached the service %d times", ref, n)
		}
	}
	if paid := len(sb.CreateCounts()); paid != strings.Count(plan, "\nrow\t") {
		t.Errorf("the service received %d payouts, want the approved file's %d rows", paid, strings.Count(plan, "\nrow\t"))
	}
}

// fits opens each page at a window width pixels wide, screenshots it, and checks that nothing
// but a table's own scrolling box is wider than the window.
func (c *console) fits(width int64, pages ...string) {
	c.t.Helper()
	c.do(chromedp.EmulateViewport(width, 900))
	defer c.do(chromedp.EmulateReset())
	for _, page := range pages {
		c.do(chromedp.Navigate(c.origin + page))
		c.await(`document.readyState === 'complete' && 'loaded'`)
		ctx, cancel := context.WithTimeout(c.browser, time.Minute)
		shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		cancel()
		if err != nil {
			c.t.Fatalf("screenshot of %s at %d px: %v", page, width, err)
		}
		if img, err := png.DecodeConfig(bytes.NewReader(shot)); err != nil || int64(img.Width) != width {
			c.t.Errorf("screenshot of %s: %v, %d px wide, want %d", page, err, img.Width, width)
		}
		name := fmt.Sprintf("console-%d-%s.png", width, strings.Trim(regexp.MustCompile(`[^a-z]+`).ReplaceAllString(page, "-"), "-"))
		if err := os.WriteFile(filepath.Join(c.t.TempDir(), name), shot, 0o600); err != nil {
			c.t.Fatal(err)
		}
		wide := c.eval(`(function () {
			var out = [];
			if (document.documentElement.scrollWidth > window.innerWidth) { out.push('document ' + document.documentElement.scrollWidth); }
			document.querySelectorAll('main > *:not(.scroll), header').forEach(function (e) {
				if (e.getBoundingClientRect().right > window.innerWidth + 1) { out.push(e.tagName + '#' + e.id + ' ends at ' + Math.round(e.getBoundingClientRect().right)); }
			});
			return out.join(', ');
		})()`)
		if wide != "" {
			c.t.Errorf("%s at %d px: wider than the window: %s", page, width, wide)
		}
	}
}

// checkConsoleTrail: the ledger's chain holds a sign-in event of each of people and one
// signature event for each of signed ("principal namespace" to the signature file, whose SHA-256
// the event names), and audit verify finds the chain intact.
func checkConsoleTrail(t *testing.T, u *user, signed map[string]string, people ...string) {
	t.Helper()
	if out, errOut, code := u.run("audit", "verify"); code != 0 {
		t.Errorf("audit verify after the console's events: exit %d\n%s%s", code, out, errOut)
	}
	db, err := sql.Open("sqlite", filepath.Join(u.dir, "payout-ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT to_state, facts FROM events WHERE ref = '' AND to_state LIKE 'CONSOLE-%' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	signedIn := map[string]bool{}
	seen := map[string]bool{}
	for rows.Next() {
		var kind, factsJSON string
		if err := rows.Scan(&kind, &factsJSON); err != nil {
			t.Fatal(err)
		}
		var facts map[string]string
		if err := json.Unmarshal([]byte(factsJSON), &facts); err != nil {
			t.Fatalf("event facts %s: %v", factsJSON, err)
		}
		switch kind {
		case "CONSOLE-SIGN-IN":
			signedIn[facts["principal"]] = true
		case "CONSOLE-SIGNED":
			key := facts["principal"] + " " + facts["namespace"]
			path, ok := signed[key]
			if !ok || seen[key] {
				t.Errorf("an unexpected signature event: %s", factsJSON)
				continue
			}
			seen[key] = true
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if sum := sha256.Sum256(data); facts["sig_sha256"] != hex.EncodeToString(sum[:]) {
				t.Errorf("the event of %s names sig_sha256 %s, not the SHA-256 of %s", key, facts["sig_sha256"], path)
			}
		}
	}
	for _, p := range people {
		if !signedIn[p] {
			t.Errorf("no sign-in event of %s in the ledger", p)
		}
	}
	for key := range signed {
		if !seen[key] {
			t.Errorf("no signature event of %s in the ledger", key)
		}
	}
}

// approve presses Approve on the review page and returns what the page says then.
func (c *console) approve() string {
	c.t.Helper()
	c.do(chromedp.Click(chromedp.ID("approve")))
	return c.await(pageOutcome)
}

// request sends a request to the console with cookie, as another site or a replaying attacker
// would, and returns the status and body.
func (c *console) request(method, path string, cookie *http.Cookie, body io.Reader, contentType string) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.origin+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	req.AddCookie(cookie)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	client := &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// upload posts a file as the drop form does, with the CSRF token csrf (none when empty).
func (c *console) upload(cookie *http.Cookie, csrf, name string, data []byte) (int, string) {
	c.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if csrf != "" {
		_ = mw.WriteField("csrf", csrf)
	}
	fw, err := mw.CreateFormFile("file", name)
	if err != nil {
		c.t.Fatal(err)
	}
	_, _ = fw.Write(data)
	_ = mw.Close()
	return c.request("POST", "/files", cookie, &body, mw.FormDataContentType())
}
