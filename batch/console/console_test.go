package console_test

import (
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payout/payout/batch/console"
	"github.com/payout/payout/batch/intake"
	"github.com/payout/payout/batch/signature/signaturetest"
	"github.com/payout/payout/ledger"
	"github.com/payout/payout/ledger/consolestore"
)

// planner is a Planner of function fields.
type planner struct {
	plan func(ctx context.Context, path string) (intake.Plan, map[int64]string, error)
}

func (p planner) Plan(ctx context.Context, path string) (intake.Plan, map[int64]string, error) {
	return p.plan(ctx, path)
}

var _ console.Planner = planner{}

// trail keeps, in memory, a Ledger's events and the console's Sessions; it has no runs.
type trail struct {
	events   []ledger.LedgerEvent
	mu       sync.Mutex
	sessions map[string]consolestore.Session
}

func (t *trail) Session(_ context.Context, digest string, now time.Time) (consolestore.Session, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.sessions[digest]
	if !ok || !now.Before(s.Expires) {
		return consolestore.Session{}, false, nil
	}
	return s, true, nil
}

func (t *trail) BeginCeremony(_ context.Context, s consolestore.Session, now time.Time, _ int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sessions == nil {
		t.sessions = map[string]consolestore.Session{}
	}
	old, ok := t.sessions[s.TokenSHA256]
	if ok && now.Before(old.Expires) {
		old.Ceremony, old.CeremonyExpires = s.Ceremony, s.CeremonyExpires
		s = old
	}
	t.sessions[s.TokenSHA256] = s
	return nil
}

func (t *trail) TakeCeremony(_ context.Context, digest string, now time.Time) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.sessions[digest]
	if !ok || s.Ceremony == "" || !now.Before(s.CeremonyExpires) || !now.Before(s.Expires) {
		return "", nil
	}
	c := s.Ceremony
	s.Ceremony = ""
	t.sessions[digest] = s
	return c, nil
}

func (t *trail) SignIn(_ context.Context, old string, s consolestore.Session) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sessions == nil {
		t.sessions = map[string]consolestore.Session{}
	}
	delete(t.sessions, old)
	t.sessions[s.TokenSHA256] = s
	return nil
}

func (t *trail) End(_ context.Context, digest string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.sessions, digest)
	return nil
}

func (t *trail) AppendLedgerEvents(_ context.Context, events ...ledger.LedgerEvent) (ledger.ChainHead, error) {
	t.events = append(t.events, events...)
	return ledger.ChainHead{}, nil
}

func (t *trail) FindRuns(context.Context, ledger.RunFilter) ([]ledger.Run, error) { return nil, nil }

func (t *trail) ApprovalPolicy(context.Context) (ledger.ApprovalPolicy, error) {
	return ledger.ApprovalPolicy{}, nil
}

func (t *trail) ChainHead(context.Context) (ledger.ChainHead, error) { return ledger.ChainHead{}, nil }

func (t *trail) VerifyChain(context.Context) (ledger.ChainReport, error) {
	return ledger.ChainReport{}, nil
}

func (t *trail) RunLines(context.Context, string, ledger.LineRead, func(ledger.ReportLine) error) error {
	return nil
}

func newConsole(t *testing.T, origin string) *httptest.Server {
	t.Helper()
	dir := t.TempDir()
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(dir, "allowed_signers"), "# nobody yet")
	tr := &trail{}
	h, err := console.New(console.Config{Origin: origin, AllowedSigners: allowed, Folder: dir, Ledger: tr, Sessions: tr, Planner: planner{
		plan: func(context.Context, string) (intake.Plan, map[int64]string, error) { return intake.Plan{}, nil, nil },
	}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

func get(t *testing.T, ts *httptest.Server, path string, cookies ...*http.Cookie) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.URL+path, nil)
	for _, c := range cookies {
		req.AddCookie(c)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// Every page carries a Content-Security-Policy that allows only the console's own script and
// style; the session cookie is HttpOnly, SameSite=Strict, and over https Secure with the
// __Host- prefix; an unknown page is a page that says what to do.
func TestConsolePagesAreLockedDown(t *testing.T) {
	t.Parallel()
	ts := newConsole(t, "https://console.example.com")
	resp, body := get(t, ts, "/")
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'", "form-action 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(body, "<script>") || strings.Contains(body, " onclick=") {
		t.Errorf("the sign-in page allows or holds inline script:\n%s", body)
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 || cookies[0].Name != "__Host-payout-console" || !cookies[0].HttpOnly || !cookies[0].Secure || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("session cookie %+v: want __Host-payout-console, HttpOnly, Secure, SameSite=Strict", cookies)
	}
	for _, page := range []string{"/no-such-page", "/signout", "/static/"} {
		if resp, body := get(t, ts, page); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "What to do") {
			t.Errorf("GET %s: %d, want the console's page for what is not there\n%s", page, resp.StatusCode, body)
		}
	}
	if resp, body := get(t, ts, "/files", cookies[0]); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "Sign in with your passkey") {
		t.Errorf("the files before signing in: %d\n%s", resp.StatusCode, body)
	}
	js, _ := get(t, ts, "/static/console.js")
	if js.StatusCode != http.StatusOK || !strings.HasPrefix(js.Header.Get("Content-Type"), "text/javascript") {
		t.Errorf("the console's script: %d %s", js.StatusCode, js.Header.Get("Content-Type"))
	}
}

// A POST without the session's token, with another session's, or from another origin does
// nothing, whatever the cookie.
func TestConsoleRefusesCrossSitePosts(t *testing.T) {
	t.Parallel()
	ts := newConsole(t, "http://localhost:8443")
	resp, body := get(t, ts, "/")
	cookie := resp.Cookies()[0]
	if cookie.Secure || cookie.Name != "payout-console" {
		t.Errorf("over plain http on loopback: cookie %+v", cookie)
	}
	token := regexp.MustCompile(`<meta name="csrf" content="([^"]+)">`).FindStringSubmatch(body)
	if token == nil {
		t.Fatalf("no CSRF token in the page:\n%s", body)
	}
	_, otherBody := get(t, ts, "/")
	otherToken := regexp.MustCompile(`<meta name="csrf" content="([^"]+)">`).FindStringSubmatch(otherBody)
	for _, c := range []struct {
		name, token, origin string
		want                int
	}{
		{"no token", "", "", http.StatusForbidden},
		{"another session's token", otherToken[1], "", http.StatusForbidden},
		{"from another origin", token[1], "https://evil.example", http.StatusForbidden},
		{"from the page", token[1], "http://localhost:8443", http.StatusOK},
	} {
		req, _ := http.NewRequest("POST", ts.URL+"/signin/begin", strings.NewReader("{}"))
		req.AddCookie(cookie)
		req.Header.Set("Accept", "application/json")
		if c.token != "" {
			req.Header.Set("X-CSRF-Token", c.token)
		}
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		if resp, body := do(t, req); resp.StatusCode != c.want {
			t.Errorf("%s: %d, want %d\n%s", c.name, resp.StatusCode, c.want, body)
		}
	}
}

// The relying-party id must be the origin's host or a parent of it: a passkey made for one is
// never asked for by the other.
func TestConsoleChecksItsRelyingParty(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(dir, "allowed_signers"), "# nobody yet")
	p := planner{plan: func(context.Context, string) (intake.Plan, map[int64]string, error) { return intake.Plan{}, nil, nil }}
	for _, c := range []struct {
		rpID, origin string
		ok           bool
	}{
		{"example.com", "https://console.example.com", true},
		{"", "https://console.example.com", true},
		{"other.example", "https://console.example.com", false},
		{"example.com", "ftp://console.example.com", false},
		{"example.com", "https://console.example.com/path", false},
	} {
		_, err := console.New(console.Config{RPID: c.rpID, Origin: c.origin, AllowedSigners: allowed, Folder: dir, Ledger: &trail{}, Sessions: &trail{}, Planner: p})
		if (err == nil) != c.ok {
			t.Errorf("rp id %q, origin %q: %v, want ok=%v", c.rpID, c.origin, err, c.ok)
		}
	}
}

// An upload of 100 MiB is cut off at the console's limit and refused before anything is written,
// whoever sends it.
func TestConsoleRefusesAnUploadOf100MiB(t *testing.T) {
	t.Parallel()
	ts := newConsole(t, "http://localhost:8443")
	resp, body := get(t, ts, "/")
	token := regexp.MustCompile(`<meta name="csrf" content="([^"]+)">`).FindStringSubmatch(body)
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		_ = mw.WriteField("csrf", token[1])
		fw, _ := mw.CreateFormFile("file", "huge.csv")
		_, _ = io.Copy(fw, io.LimitReader(zeros{}, 100<<20))
		_ = mw.Close()
		_ = pw.Close()
	}()
	req, _ := http.NewRequest("POST", ts.URL+"/files", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.AddCookie(resp.Cookies()[0])
	got, page := do(t, req)
	if got.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(page, "larger than the console takes") {
		t.Errorf("an upload of 100 MiB: %d, want 413 saying so\n%.500s", got.StatusCode, page)
	}
}

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
