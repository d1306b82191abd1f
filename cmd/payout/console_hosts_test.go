package main_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/payout/payout/batch/signature/signaturetest"
	"github.com/payout/payout/internal/pgtest"
)

// balancer is a load balancer in front of console hosts, as a company's would be without
// sticky sessions: each GET goes to the next host, and so does each POST, counted apart, so that
// the two requests of every passkey ceremony (begin, finish) reach two different hosts.
type balancer struct {
	hosts []*httputil.ReverseProxy
	names []string

	mu         sync.Mutex
	gets, post int
	served     []string // "METHOD PATH HOST", in order
}

func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	n := &b.gets
	if r.Method == http.MethodPost {
		n = &b.post
	}
	i := *n % len(b.hosts)
	*n++
	b.served = append(b.served, r.Method+" "+r.URL.Path+" "+b.names[i])
	b.mu.Unlock()
	b.hosts[i].ServeHTTP(w, r)
}

// hostsOf are the hosts that served each request to path, in order.
func (b *balancer) hostsOf(path string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, s := range b.served {
		if f := strings.Fields(s); f[1] == path {
			out = append(out, f[2])
		}
	}
	return out
}

// hostRequest sends a request straight to the console host at addr, as the browser at origin
// would through the balancer (its Origin header, its cookie), and returns the status and body.
func hostRequest(t *testing.T, addr, origin, method, path string, cookie *http.Cookie, form url.Values) (int, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, "http://"+addr+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", origin)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	req.AddCookie(cookie)
	client := &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestConsoleTwoHostsOnPostgres: two `payout serve` hosts on one PostgreSQL ledger, behind a
// balancer that sends each request to the next host. bob registers and signs in, each passkey
// ceremony begun on one host and finished on the other; his cookie is a session on both hosts;
// he approves a file (begun on one host, signed on the other) that folder mode then pays; he
// downloads the run's evidence pack, which `payout audit verify --pack` finds intact; he signs
// out on host B with the CSRF token, and host A refuses his cookie from then on. The ledger
// holds a digest of his token, never the token, and the sign-in and signature events.
func TestConsoleTwoHostsOnPostgres(t *testing.T) {
	t.Parallel() // a ledger, a sandbox, two consoles and a browser of its own
	sb := newSandbox(t)
	u := newUserWithoutLedger(t, sb)
	where := pgtest.New(t)
	u.env = append(u.env, "PAYOUT_LEDGER="+where)
	if out, errOut, code := u.run("init", "--approvals", "1"); code != 0 {
		t.Fatalf("init: exit %d: %s %s", code, out, errOut)
	}
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(t.TempDir(), "allowed_signers"), "# nobody yet")
	u.env = append(u.env, "PAYOUT_ALLOWED_SIGNERS="+allowed)
	folder := filepath.Join(u.dir, "drop")
	if err := os.MkdirAll(filepath.Join(folder, "inbox"), 0o750); err != nil {
		t.Fatal(err)
	}

	// The balancer's address is the origin both hosts are told browsers reach them at.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strings.TrimPrefix(ln.Addr().String(), "127.0.0.1:")
	ln.Close()
	wantOrigin := "http://localhost:" + port
	addrA, _ := startConsoleHost(t, u, folder, "--origin", wantOrigin)
	addrB, _ := startConsoleHost(t, u, folder, "--origin", wantOrigin)
	b := &balancer{}
	for i, addr := range []string{addrA, addrB} {
		b.hosts = append(b.hosts, httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: addr}))
		b.names = append(b.names, string(rune('A'+i)))
	}
	ln, err = net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatalf("the balancer's port was taken meanwhile: %v", err)
	}
	srv := &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	origin := wantOrigin

	c := newBrowser(t, origin)
	line := c.register("bob")
	signaturetest.WriteAllowedSigners(t, allowed, line)
	if got := c.signIn(); got != "FILES" {
		t.Fatalf("bob signs in through the balancer: %q", got)
	}
	for _, path := range []string{"/register/begin", "/signin/begin"} {
		finish := strings.Replace(path, "begin", "finish", 1)
		begun, finished := b.hostsOf(path), b.hostsOf(finish)
		if len(begun) == 0 || len(finished) == 0 || begun[len(begun)-1] == finished[len(finished)-1] {
			t.Errorf("%s on %v and %s on %v: want the last of each on two hosts", path, begun, finish, finished)
		}
	}
	cookie := c.sessionCookie()
	c.do(chromedp.Navigate(origin + "/files"))
	csrf := c.eval(`document.querySelector('meta[name="csrf"]').content`)
	for host, addr := range map[string]string{"A": addrA, "B": addrB} {
		if code, body := hostRequest(t, addr, origin, "GET", "/files", cookie, nil); code != http.StatusOK || !strings.Contains(body, "bob") {
			t.Errorf("bob's cookie on host %s: %d, want his files page", host, code)
		}
		if code, _ := hostRequest(t, addr, origin, "POST", "/audit/verify", cookie, url.Values{}); code != http.StatusForbidden {
			t.Errorf("a POST without the CSRF token on host %s: %d, want 403", host, code)
		}
	}
	if code, body := hostRequest(t, addrA, origin, "POST", "/audit/verify", cookie, url.Values{"csrf": {csrf}}); code != http.StatusOK || !strings.Contains(body, "The chain is intact") {
		t.Errorf("the chain checked on host A with the token the page of another host gave: %d\n%.500s", code, body)
	}

	// A file for bob to approve: dropped by the folder's owner, held for its one signature.
	copyFile(t, samplePath(t), filepath.Join(folder, "inbox", "payroll.csv"))
	expectExit5(t, u, "", "watch", "--once", "--settle", "0", folder)
	c.do(chromedp.Navigate(origin + "/review?folder=awaiting-approval&file=payroll.csv"))
	c.await(`document.getElementById('approve') && 'shown'`)
	if got := c.approve(); got != "FILES" {
		t.Fatalf("bob approves through the balancer: %q", got)
	}
	begun, signed := b.hostsOf("/sign/begin"), b.hostsOf("/sign/finish")
	if len(begun) != 1 || len(signed) != 1 || begun[0] == signed[0] {
		t.Errorf("the approval begun on %v and signed on %v: want two hosts", begun, signed)
	}
	if out, errOut, code := u.run("watch", "--once", "--settle", "0", folder); code != 0 {
		t.Fatalf("watch with bob's approval: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := u.run("reconcile"); code != 0 {
		t.Fatalf("reconcile: exit %d\n%s%s", code, out, errOut)
	}

	// The auditors' page lists the run and the reconciliation, and the run's pack checks out.
	c.do(chromedp.Navigate(origin + "/audit"))
	if n := c.eval(`String(document.querySelectorAll('#reconciliations tr[data-run]').length)`); n != "1" {
		t.Errorf("%s reconciliations listed, want 1", n)
	}
	pack := c.eval(`(function () { var a = document.querySelector('#runs tr[data-run] a.pack'); return a ? a.getAttribute('href') : ''; })()`)
	if !strings.HasPrefix(pack, "/audit/pack?run=") {
		t.Fatalf("the audit page offers no evidence pack of the run: %q\n%s", pack, c.eval(`document.getElementById('runs').innerText`))
	}
	code, zip := hostRequest(t, addrB, origin, "GET", pack, cookie, nil)
	if code != http.StatusOK || !strings.HasPrefix(zip, "PK") {
		t.Fatalf("download %s: %d, %.200q", pack, code, zip)
	}
	packFile := filepath.Join(t.TempDir(), "evidence.zip")
	if err := os.WriteFile(packFile, []byte(zip), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := u.run("audit", "verify", "--pack", packFile); code != 0 || !strings.Contains(out, "intact") {
		t.Errorf("audit verify --pack of the pack the console gave: exit %d\n%s%s", code, out, errOut)
	}

	db := pgOpen(t, where)
	defer db.Close()
	digest := sha256.Sum256([]byte(cookie.Value))
	var rows, mine int
	if err := db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE token_sha256 = $1) FROM console_sessions`, hex.EncodeToString(digest[:])).Scan(&rows, &mine); err != nil {
		t.Fatal(err)
	}
	if mine != 1 {
		t.Errorf("the ledger holds %d sessions, %d of them by the digest of bob's token; want his", rows, mine)
	}
	var leaked int
	if err := db.QueryRow(`SELECT count(*) FROM console_sessions WHERE strpos(token_sha256 || principal || credential || user_handle || ceremony, $1) > 0`, cookie.Value).Scan(&leaked); err != nil || leaked != 0 {
		t.Errorf("the ledger holds bob's token itself in %d rows (%v)", leaked, err)
	}

	// Signing out on B ends the session on A.
	if code, _ := hostRequest(t, addrB, origin, "POST", "/signout", cookie, url.Values{"csrf": {csrf}}); code != http.StatusSeeOther {
		t.Errorf("bob signs out on host B: %d, want 303", code)
	}
	if code, body := hostRequest(t, addrA, origin, "GET", "/files", cookie, nil); code != http.StatusUnauthorized || !strings.Contains(body, "not signed in") {
		t.Errorf("bob's cookie on host A after he signed out on B: %d, want 401 saying he is not signed in", code)
	}
	if err := db.QueryRow(`SELECT count(*) FROM console_sessions WHERE token_sha256 = $1`, hex.EncodeToString(digest[:])).Scan(&mine); err != nil || mine != 0 {
		t.Errorf("bob's session is still in the ledger after he signed out: %d (%v)", mine, err)
	}
	events := map[string]int{}
	ev, err := db.Query(`SELECT to_state FROM events WHERE ref = '' AND to_state LIKE 'CONSOLE-%'`)
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	for ev.Next() {
		var k string
		if err := ev.Scan(&k); err != nil {
			t.Fatal(err)
		}
		events[k]++
	}
	if events["CONSOLE-SIGN-IN"] != 1 || events["CONSOLE-SIGNED"] != 1 {
		t.Errorf("the chain's console events: %v, want bob's sign-in and his signature", events)
	}
	if out, errOut, code := u.run("audit", "verify"); code != 0 {
		t.Errorf("audit verify of the ledger the two hosts shared: exit %d\n%s%s", code, out, errOut)
	}
}
