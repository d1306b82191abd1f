package console_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/console"
	"github.com/payout/payout/batch/intake"
	"github.com/payout/payout/batch/signature"
	"github.com/payout/payout/batch/signature/signaturetest"
	"github.com/payout/payout/ledger"
)

// browser is a client of the console that answers its WebAuthn requests with a software passkey,
// as a browser at origin would.
type browser struct {
	t            *testing.T
	ts           *httptest.Server
	cookie       *http.Cookie
	csrf         string
	passkey      *signaturetest.Passkey
	credentialID []byte
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf" content="([^"]+)">`)

// open loads a page and keeps the session's cookie and CSRF token.
func (b *browser) open(path string) string {
	b.t.Helper()
	req, _ := http.NewRequest("GET", b.ts.URL+path, nil)
	if b.cookie != nil {
		req.AddCookie(b.cookie)
	}
	resp, body := do(b.t, req)
	for _, c := range resp.Cookies() {
		b.cookie = c
	}
	if m := csrfMeta.FindStringSubmatch(body); m != nil {
		b.csrf = m[1]
	}
	return body
}

// post sends JSON as the console's script does and decodes the answer into out.
func (b *browser) post(path string, body any, out any) int {
	b.t.Helper()
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", b.ts.URL+path, bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-CSRF-Token", b.csrf)
	req.AddCookie(b.cookie)
	resp, text := do(b.t, req)
	for _, c := range resp.Cookies() {
		b.cookie = c
	}
	if out != nil {
		_ = json.Unmarshal([]byte(text), out)
	}
	return resp.StatusCode
}

// options is the part of the console's WebAuthn request the test answers.
type options struct {
	PublicKey struct{ Challenge string } `json:"publicKey"`
	Error     string                     `json:"error"`
}

// answer makes the assertion a browser at origin would send for challenge, with the passkey.
func (b *browser) answer(challenge []byte, origin string) map[string]any {
	a := b.passkey.Assert(b.t, challenge, origin, 0x05)
	enc := base64.RawURLEncoding.EncodeToString
	return map[string]any{"id": enc(b.credentialID), "rawId": enc(b.credentialID), "type": "public-key",
		"response": map[string]string{"clientDataJSON": enc(a.ClientDataJSON), "authenticatorData": enc(a.AuthenticatorData),
			"signature": enc(a.Signature), "userHandle": enc([]byte("bob-handle"))}}
}

func (b *browser) challenge(o options) []byte {
	b.t.Helper()
	c, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(o.PublicKey.Challenge, "="))
	if err != nil || len(c) == 0 {
		b.t.Fatalf("no challenge in the console's request: %+v (%v)", o, err)
	}
	return c
}

// signedIn is a console for a folder whose awaiting-approval holds pay.csv, with bob (a signer)
// signed in through a software passkey; it returns his browser, the file, and the chain's events.
func signedIn(t *testing.T, plan intake.Plan) (*browser, string, string, *trail) {
	t.Helper()
	return signedInTo(t, func() intake.Plan { return plan })
}

// signedInTo is signedIn to a console whose planner reads the file's plan as plan says now.
func signedInTo(t *testing.T, plan func() intake.Plan) (*browser, string, string, *trail) {
	t.Helper()
	const origin = "http://localhost:8443"
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "awaiting-approval"), 0o750); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "awaiting-approval", "pay.csv")
	if err := os.WriteFile(file, []byte("external_invoice_ref,amount\nA-1,10.00\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	bob := signaturetest.NewPasskey(t, "localhost", origin)
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(t.TempDir(), "allowed_signers"),
		bob.AllowedLine("bob", "payout-plan,payout-reject")+" passkey:"+base64.RawURLEncoding.EncodeToString(id))
	events := &trail{}
	h, err := console.New(console.Config{Origin: origin, AllowedSigners: allowed, Folder: dir, Ledger: events, Sessions: events,
		Planner: planner{plan: func(context.Context, string) (intake.Plan, map[int64]string, error) { return plan(), nil, nil }}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	b := &browser{t: t, ts: ts, passkey: bob, credentialID: id}
	b.open("/")
	var o options
	if code := b.post("/signin/begin", map[string]any{}, &o); code != http.StatusOK {
		t.Fatalf("signin/begin: %d %s", code, o.Error)
	}
	if code := b.post("/signin/finish", b.answer(b.challenge(o), origin), &o); code != http.StatusOK {
		t.Fatalf("signin/finish: %d %s", code, o.Error)
	}
	if body := b.open("/files"); !strings.Contains(body, "bob") {
		t.Fatalf("bob is not signed in:\n%.500s", body)
	}
	return b, file, allowed, events
}

// A signed-in signer's approval is refused when the assertion comes from another origin or
// answers another challenge, and written, verifiable and recorded in the chain when it answers
// the plan's own; a sign-in is an event of the chain too.
func TestConsoleRefusesAssertionsForAnotherOriginOrPlan(t *testing.T) {
	t.Parallel()
	const origin = "http://localhost:8443"
	plan := intake.Plan{FileSHA256: "aa", Digest: "bb"}
	b, file, allowed, events := signedIn(t, plan)
	var o options

	approve := map[string]string{"folder": "awaiting-approval", "file": "pay.csv", "decision": "approve"}
	other, _ := signature.SignedData(strings.NewReader("another plan"), signature.NamespacePlan)
	for name, forge := range map[string]func(challenge []byte) map[string]any{
		"from another origin": func(c []byte) map[string]any { return b.answer(c, "https://evil.example") },
		"for another plan":    func([]byte) map[string]any { return b.answer(other, origin) },
	} {
		if code := b.post("/sign/begin", approve, &o); code != http.StatusOK {
			t.Fatalf("%s: sign/begin: %d %s", name, code, o.Error)
		}
		if code := b.post("/sign/finish", forge(b.challenge(o)), &o); code != http.StatusBadRequest {
			t.Errorf("an assertion %s: %d, want 400", name, code)
		}
		if _, err := os.Stat(file + ".bob.sig"); err == nil {
			t.Fatalf("an assertion %s was written as an approval", name)
		}
	}

	if code := b.post("/sign/begin", approve, &o); code != http.StatusOK {
		t.Fatalf("sign/begin: %d %s", code, o.Error)
	}
	challenge := b.challenge(o)
	if code := b.post("/sign/finish", b.answer(challenge, origin), &o); code != http.StatusOK {
		t.Fatalf("sign/finish: %d %s", code, o.Error)
	}
	sig, err := os.ReadFile(file + ".bob.sig")
	if err != nil {
		t.Fatal(err)
	}
	statement := plan.Statement(time.Now().UTC().Truncate(24 * time.Hour).Add(approval.DefaultValidity))
	var text bytes.Buffer
	_, _ = text.ReadFrom(statement)
	a, err := signature.LoadAllowedSigners(allowed)
	if err != nil {
		t.Fatal(err)
	}
	if who, err := signature.Verify(text.Bytes(), sig, signature.NamespacePlan, a, time.Now()); err != nil || who.Principal() != "bob" {
		t.Errorf("the approval written: %v, %q", err, who.Principal())
	}
	kinds := []string{}
	for _, e := range events.events {
		kinds = append(kinds, e.Kind+" "+e.Facts["principal"])
	}
	if strings.Join(kinds, ",") != ledger.EventConsoleSignIn+" bob,"+ledger.EventConsoleSigned+" bob" {
		t.Errorf("the chain's events: %v, want bob's sign-in and his one signature", kinds)
	}
}

// A note's name in a folder people write (a link to another file of the service account) shows
// nothing of what it leads to.
func TestConsoleNeverFollowsALinkInANotesName(t *testing.T) {
	t.Parallel()
	b, file, _, _ := signedIn(t, intake.Plan{FileSHA256: "aa", Digest: "bb"})
	secret := filepath.Join(t.TempDir(), "auth-token")
	if err := os.WriteFile(secret, []byte("MERCHANT-TOKEN-SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, file+".why.txt"); err != nil {
		t.Fatal(err)
	}
	for _, page := range []string{"/files", "/review?folder=awaiting-approval&file=pay.csv"} {
		if body := b.open(page); strings.Contains(body, "MERCHANT-TOKEN-SECRET") || !strings.Contains(body, "pay.csv") {
			t.Errorf("%s shows what a link in a note's name leads to, or not the file:\n%.800s", page, body)
		}
	}
}

// The statement a signature is written for is computed again when the passkey's answer comes
// (maybe to another host): a file whose plan changed after the signer pressed the button gets
// no signature, and its signer is told to review it again.
func TestConsoleSignsNothingWhenThePlanChangedMeanwhile(t *testing.T) {
	t.Parallel()
	const origin = "http://localhost:8443"
	var mu sync.Mutex
	digest := "bb"
	b, file, _, events := signedInTo(t, func() intake.Plan {
		mu.Lock()
		defer mu.Unlock()
		return intake.Plan{FileSHA256: "aa", Digest: digest}
	})
	var o options
	refuse := map[string]string{"folder": "awaiting-approval", "file": "pay.csv", "decision": "refuse", "reason": "wrong month"}
	if code := b.post("/sign/begin", refuse, &o); code != http.StatusOK {
		t.Fatalf("sign/begin: %d %s", code, o.Error)
	}
	mu.Lock()
	digest = "cc"
	mu.Unlock()
	if code := b.post("/sign/finish", b.answer(b.challenge(o), origin), &o); code != http.StatusConflict || !strings.Contains(o.Error, "changed") {
		t.Errorf("a refusal answered after the plan changed: %d %q, want 409 saying it changed", code, o.Error)
	}
	if _, err := os.Stat(file + ".bob.reject.sig"); err == nil {
		t.Error("a refusal of a plan that changed meanwhile was written")
	}
	if code := b.post("/sign/finish", b.answer(b.challenge(o), origin), &o); code != http.StatusBadRequest {
		t.Errorf("the same answer again: %d, want 400 (the ceremony was taken)", code)
	}
	for _, e := range events.events {
		if e.Kind == ledger.EventConsoleSigned {
			t.Errorf("a signature event for a plan that changed: %+v", e)
		}
	}
}
