package main_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/batch/signature/signaturetest"
)

// A passkey's approval, written beside the file as the console writes it, passes
// `ssh-keygen -Y verify` and counts in a run exactly as an ssh-keygen signature does: one of the
// two signers the policy asks for, named in "approved_by".
func TestConsolePasskeyApprovalCountsInARun(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	sb := newSandbox(t)
	u := newUser(t, sb)
	dir := t.TempDir()
	alice := signaturetest.NewKey(t, dir, "alice")
	bob := signaturetest.NewPasskey(t, "console.example.com", "https://console.example.com")
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(dir, "allowed_signers"),
		alice.AllowedLine("alice"), bob.AllowedLine("bob", "payout-plan,payout-reject"))
	u.env = append(u.env, "PAYOUT_ALLOWED_SIGNERS="+allowed)
	if _, errOut, code := u.run("policy", "--approvals", "2"); code != 0 {
		t.Fatalf("policy --approvals 2: exit %d: %s", code, errOut)
	}
	file := filepath.Join(u.dir, "payroll.csv")
	copyFile(t, samplePath(t), file)
	plan, errOut, code := u.run("plan", "payroll.csv")
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errOut)
	}
	passkeySig := bob.Sign(t, "payout-plan", []byte(plan))
	if err := os.WriteFile(file+".bob.sig", passkeySig, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := signaturetest.Verify(t, allowed, "bob", "payout-plan", passkeySig, []byte(plan)); err != nil {
		t.Fatalf("ssh-keygen -Y verify refused the passkey's approval: %v: %s", err, out)
	}
	expectExit5(t, u, "needs 2 distinct signers; have 1", "run", "payroll.csv")
	u.signPlan(t, alice, "payroll.csv", file+".alice.sig")
	out, errOut, code := u.run("run", "--json", "payroll.csv")
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 {
		t.Fatalf("run with an ssh-keygen and a passkey signature: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if by, _ := res["approved_by"].(string); !strings.Contains(by, "alice") || !strings.Contains(by, "bob") {
		t.Errorf("approved_by %q: want alice and bob", by)
	}
}

// serve refuses what would put sessions or approvals at risk: plain HTTP on an address others
// reach, half a certificate, no allowed signers, no ledger to record sign-ins in.
func TestConsoleServeRefusesUnsafeSetups(t *testing.T) {
	t.Parallel() // a ledger and folders of its own
	sb := newSandbox(t)
	u := newUser(t, sb)
	dir := t.TempDir()
	if _, errOut, code := u.run("serve", "--listen", "127.0.0.1:0", dir); code != 2 || !strings.Contains(errOut, "PAYOUT_ALLOWED_SIGNERS") {
		t.Errorf("serve without allowed signers: exit %d, want 2 naming PAYOUT_ALLOWED_SIGNERS: %s", code, errOut)
	}
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(t.TempDir(), "allowed_signers"), "# nobody yet")
	u.env = append(u.env, "PAYOUT_ALLOWED_SIGNERS="+allowed)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:0"}, "plain text"},
		{[]string{"--listen", "127.0.0.1:0", "--cert", "cert.pem"}, "both --cert and --key"},
		{[]string{"--listen", "127.0.0.1:0", "--ledger", filepath.Join(dir, "none.db")}, "ledger"},
		{[]string{"--listen", "127.0.0.1:0", "--origin", "https://payout.example.com", "--rp-id", "other.example"}, "relying-party id"},
	} {
		if _, errOut, code := u.run(append(append([]string{"serve"}, c.args...), dir)...); code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("serve %v: exit %d, want 2 saying %q: %s", c.args, code, c.want, errOut)
		}
	}
}

// With a certificate, serve speaks TLS only, and its session cookie is Secure with the
// __Host- prefix, under Strict-Transport-Security.
func TestConsoleServesTLS(t *testing.T) {
	t.Parallel() // a ledger and folders of its own
	sb := newSandbox(t)
	u := newUser(t, sb)
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(t.TempDir(), "allowed_signers"), "# nobody yet")
	u.env = append(u.env, "PAYOUT_ALLOWED_SIGNERS="+allowed)
	certFile, keyFile, pool := selfSignedCert(t, "localhost")
	origin := startConsole(t, u, t.TempDir(), "--cert", certFile, "--key", keyFile, "--rp-id", "localhost")
	if !strings.HasPrefix(origin, "https://localhost:") {
		t.Fatalf("origin %s: want https://localhost:PORT", origin)
	}
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Get(origin + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookies := resp.Cookies()
	if resp.StatusCode != http.StatusOK || len(cookies) != 1 || cookies[0].Name != "__Host-payout-console" || !cookies[0].Secure || !cookies[0].HttpOnly {
		t.Errorf("GET / over TLS: %d, cookies %+v: want a Secure, HttpOnly __Host- cookie", resp.StatusCode, cookies)
	}
	if hsts := resp.Header.Get("Strict-Transport-Security"); hsts == "" {
		t.Error("no Strict-Transport-Security over TLS")
	}
	if plain, err := http.Get("http" + strings.TrimPrefix(origin, "https") + "/"); err == nil {
		plain.Body.Close()
		if plain.StatusCode == http.StatusOK {
			t.Error("the TLS console answered plain HTTP")
		}
	}
}

// selfSignedCert writes a certificate for host and its key, and returns their files and a pool
// that trusts the certificate.
func selfSignedCert(t *testing.T, host string) (string, string, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}
