package main_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
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
	listening := regexp.MustCompile(`console listening on \S+ for (http://\S+)`)
	for lines.Scan() {
		if m := listening.FindStringSubmatch(lines.Text()); m != nil {
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			return m[1]
		}
		t.Logf("serve: %s", lines.Text())
	}
	t.Fatalf("payout serve stopped before it listened: %v", lines.Err())
	return ""
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
		if _, err := chromedp.Run(c.browser, cdpCall(webauthn.AddCredential, webauthn.AddCredentialParams{AuthenticatorID: c.authID, Credential: cred})); err != nil {
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
	c.signOut()
	_ = fmt.Sprint
	_ = multipart.NewWriter
}
