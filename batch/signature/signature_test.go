package signature_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/batch/signature"
	"github.com/payout/payout/batch/signature/signaturetest"
)

func TestSSHKeygenSignatureIsAccepted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	alice, bob := signaturetest.NewKey(t, dir, "alice"), signaturetest.NewKey(t, dir, "bob")
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(dir, "allowed_signers"),
		"# the finance team", alice.AllowedLine("alice@example.com"), `bob,robert namespaces="payout-plan" `+bob.Public)
	a, err := signature.LoadAllowedSigners(allowed)
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("payout-plan v1\nrow 1\n")
	now := time.Now()
	id, err := signature.Verify(msg, signaturetest.Sign(t, alice, signature.NamespacePlan, msg), signature.NamespacePlan, a, now)
	if err != nil || id.Principal() != "alice@example.com" || !strings.HasPrefix(id.Fingerprint, "SHA256:") {
		t.Fatalf("alice: %+v, %v", id, err)
	}
	bobSig := signaturetest.Sign(t, bob, signature.NamespacePlan, msg)
	if id, err := signature.Verify(msg, bobSig, signature.NamespacePlan, a, now); err != nil || id.Principal() != "bob,robert" {
		t.Fatalf("bob: %+v, %v", id, err)
	}
	if _, err := signature.Verify([]byte("payout-plan v1\nrow 2\n"), bobSig, signature.NamespacePlan, a, now); !errors.Is(err, signature.ErrBadSignature) {
		t.Fatalf("another message: %v, want ErrBadSignature", err)
	}
	// bob's line allows payout-plan only.
	policySig := signaturetest.Sign(t, bob, signature.NamespacePolicy, msg)
	if _, err := signature.Verify(msg, policySig, signature.NamespacePolicy, a, now); !errors.Is(err, signature.ErrUnknownKey) {
		t.Fatalf("namespace the line does not allow: %v, want ErrUnknownKey", err)
	}
	if _, err := signature.Verify(msg, policySig, signature.NamespacePlan, a, now); !errors.Is(err, signature.ErrBadSignature) {
		t.Fatalf("signature of another namespace: %v, want ErrBadSignature", err)
	}
	carol := signaturetest.NewKey(t, dir, "carol")
	if _, err := signature.Verify(msg, signaturetest.Sign(t, carol, signature.NamespacePlan, msg), signature.NamespacePlan, a, now); !errors.Is(err, signature.ErrUnknownKey) {
		t.Fatalf("unlisted key: %v, want ErrUnknownKey", err)
	}
}

func TestValidity(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	k := signaturetest.NewKey(t, dir, "dave")
	a, err := signature.ParseAllowedSigners("test", []byte(`dave valid-after="20300101",valid-before="20310101Z" `+k.Public+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("x")
	sig := signaturetest.Sign(t, k, signature.NamespacePlan, msg)
	for _, c := range []struct {
		at time.Time
		ok bool
	}{{time.Date(2029, 12, 1, 0, 0, 0, 0, time.UTC), false}, {time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC), true}, {time.Date(2031, 1, 2, 0, 0, 0, 0, time.UTC), false}} {
		_, err := signature.Verify(msg, sig, signature.NamespacePlan, a, c.at)
		if (err == nil) != c.ok {
			t.Errorf("at %s: %v, want ok=%v", c.at, err, c.ok)
		}
	}
}

func TestSignIsVerifiedBySSHKeygen(t *testing.T) {
	dir := t.TempDir()
	k := signaturetest.NewKey(t, dir, "erin")
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(dir, "allowed_signers"), k.AllowedLine("erin"))
	key, err := signature.LoadKey(context.Background(), k.Path, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	defer key.Close()
	msg := []byte("payout-pack v1\n")
	sig, err := signature.Sign(context.Background(), strings.NewReader(string(msg)), signature.NamespacePack, key)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := signaturetest.Verify(t, allowed, "erin", signature.NamespacePack, sig, msg); err != nil {
		t.Fatalf("ssh-keygen -Y verify: %v: %s", err, out)
	}
	if out, err := signaturetest.Verify(t, allowed, "erin", signature.NamespacePack, sig, []byte("other")); err == nil {
		t.Fatalf("ssh-keygen -Y verify accepted another message: %s", out)
	}
	t.Setenv(signature.EnvSigningKey, k.Path)
	env, err := signature.SigningKeyFromEnv(context.Background(), os.Getenv)
	if err != nil || env.Fingerprint() != key.Fingerprint() {
		t.Fatalf("from $%s: %v", signature.EnvSigningKey, err)
	}
}

func TestEncryptedKeyNeedsAgent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	signaturetest.RequireSSHKeygen(t)
	k := signaturetest.NewKey(t, dir, "frank")
	if out, err := runCmd("ssh-keygen", "-q", "-p", "-N", "secret words", "-f", k.Path); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	_, err := signature.LoadKey(context.Background(), k.Path, func(string) string { return "" })
	if !errors.Is(err, signature.ErrNoKey) || !strings.Contains(err.Error(), "SSH_AUTH_SOCK") {
		t.Fatalf("encrypted key without an agent: %v", err)
	}
	// The advice names the key and how to give it to the agent, never to name a key file: it was.
	for _, want := range []string{"protected by a passphrase", "ssh-add " + k.Path, "ssh-agent"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("encrypted key without an agent: %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "--key") {
		t.Errorf("encrypted key without an agent: %q sends its user round to --key", err)
	}
	_, err = signature.SigningKeyFromEnv(context.Background(), func(name string) string {
		if name == signature.EnvSigningKey {
			return k.Path
		}
		return ""
	})
	if !errors.Is(err, signature.ErrNoKey) || !strings.Contains(err.Error(), "needs no passphrase") {
		t.Errorf("an encrypted service account key: %v, want to be told a key that signs unattended needs no passphrase", err)
	}
}

func TestUnsafeAllowedSignersRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	k := signaturetest.NewKey(t, dir, "gina")
	path := signaturetest.WriteAllowedSigners(t, filepath.Join(dir, "allowed_signers"), k.AllowedLine("gina"))
	for _, mode := range []os.FileMode{0o664, 0o646} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := signature.LoadAllowedSigners(path); !errors.Is(err, signature.ErrUnsafeFile) || !strings.Contains(err.Error(), "chmod go-w") {
			t.Errorf("mode %04o: %v, want ErrUnsafeFile", mode, err)
		}
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := signature.LoadAllowedSigners(path); err != nil {
		t.Fatalf("mode 0600: %v", err)
	}
	if _, err := signature.LoadAllowedSigners(dir); !errors.Is(err, signature.ErrUnsafeFile) {
		t.Errorf("a directory: %v, want ErrUnsafeFile", err)
	}
	if os.Getuid() == 0 {
		if err := os.Chown(path, 4242, 4242); err != nil {
			t.Fatal(err)
		}
		if _, err := signature.LoadAllowedSigners(path); !errors.Is(err, signature.ErrUnsafeFile) || !strings.Contains(err.Error(), "uid 4242") {
			t.Errorf("owned by another account: %v, want ErrUnsafeFile", err)
		}
	}
}

// A trust root in a folder that others may write could be put there by them, and so could the
// file a link leads to: both folders are checked, as sshd's StrictModes checks the path to a
// user's authorized_keys. A sticky folder (as /tmp) lets nobody replace another's file.
func TestAllowedSignersInAFolderOthersMayWriteRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	k := signaturetest.NewKey(t, dir, "ivan")
	open := filepath.Join(dir, "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	path := signaturetest.WriteAllowedSigners(t, filepath.Join(open, "allowed_signers"), k.AllowedLine("ivan"))
	if _, err := signature.LoadAllowedSigners(path); err != nil {
		t.Fatalf("in a folder of its owner's: %v", err)
	}
	link := filepath.Join(dir, "allowed_signers")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, link} {
		if _, err := signature.LoadAllowedSigners(p); !errors.Is(err, signature.ErrUnsafeFile) || !strings.Contains(err.Error(), "lets others than its owner put another file there") {
			t.Errorf("%s, its folder writable by all: %v, want ErrUnsafeFile", p, err)
		}
	}
	if err := os.Chmod(open, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	if _, err := signature.LoadAllowedSigners(link); err != nil {
		t.Errorf("in a sticky folder: %v", err)
	}
}

func TestParseAllowedSignersErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, text, want string }{
		{"no key", "alice\n", "nothing else"},
		{"bad option", "alice frobnicate ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIcHq7uYWhTVTTWvrUzq8xU3y6g5bqOt2nT6qSUo3CJN\n", "unknown option"},
		{"bad time", `alice valid-after="2030" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIcHq7uYWhTVTTWvrUzq8xU3y6g5bqOt2nT6qSUo3CJN` + "\n", "YYYYMMDD"},
		{"bad key", "alice ssh-ed25519 !!!\n", "want principals"},
	} {
		_, err := signature.ParseAllowedSigners("f", []byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%s: %v, want %q at line 1", c.name, err, c.want)
		}
	}
}

// TestAgentSigns: a passphrase-protected key signs through the ssh agent that holds it, named by
// its private or its public key file.
func TestAgentSigns(t *testing.T) {
	t.Parallel()
	signaturetest.RequireSSHKeygen(t)
	if _, err := exec.LookPath("ssh-agent"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("ssh-agent is not installed (apt-get install openssh-client): %v", err)
		}
		t.Skip("ssh-agent is not installed (apt-get install openssh-client)")
	}
	dir := t.TempDir()
	k := signaturetest.NewKey(t, dir, "hana")
	if out, err := runCmd("ssh-keygen", "-q", "-p", "-N", "secret words", "-f", k.Path); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	sock := filepath.Join(dir, "agent.sock")
	// ssh-agent forks once its socket listens, and prints the pid of the agent.
	out, err := exec.Command("ssh-agent", "-s", "-a", sock).Output()
	if err != nil {
		t.Fatalf("ssh-agent: %v", err)
	}
	_, pidText, _ := strings.Cut(string(out), "SSH_AGENT_PID=")
	pid, err := strconv.Atoi(pidText[:strings.IndexByte(pidText, ';')])
	if err != nil {
		t.Fatalf("ssh-agent's pid in %q: %v", out, err)
	}
	t.Cleanup(func() {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill()
		}
	})
	getenv := func(name string) string {
		if name == "SSH_AUTH_SOCK" {
			return sock
		}
		return ""
	}
	// An encrypted key cannot be added without its passphrase on a terminal: add the public
	// half's private twin unencrypted from a copy instead.
	plain := filepath.Join(dir, "hana-plain")
	data, _ := os.ReadFile(k.Path)
	if err := os.WriteFile(plain, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := runCmd("ssh-keygen", "-q", "-p", "-P", "secret words", "-N", "", "-f", plain); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	addCmd := exec.Command("ssh-add", plain)
	addCmd.Env = []string{"SSH_AUTH_SOCK=" + sock}
	if out, err := addCmd.CombinedOutput(); err != nil {
		t.Fatalf("ssh-add: %v: %s", err, out)
	}
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(dir, "allowed_signers"), k.AllowedLine("hana"))
	for _, path := range []string{k.Path, k.Path + ".pub"} {
		key, err := signature.LoadKey(context.Background(), path, getenv)
		if err != nil {
			t.Fatalf("%s through the agent: %v", path, err)
		}
		msg := []byte("payout-plan v1\n")
		sig, err := signature.Sign(context.Background(), strings.NewReader(string(msg)), signature.NamespacePlan, key)
		key.Close()
		if err != nil {
			t.Fatal(err)
		}
		if out, err := signaturetest.Verify(t, allowed, "hana", signature.NamespacePlan, sig, msg); err != nil {
			t.Fatalf("ssh-keygen -Y verify of the agent's signature: %v: %s", err, out)
		}
	}
}

// TestCertificateAuthority: with cert-authority, a key signs for the principals of its
// certificate that the authority signed and the line's patterns allow.
func TestCertificateAuthority(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := signaturetest.NewKey(t, dir, "ca")
	user := signaturetest.NewKey(t, dir, "ivan")
	if out, err := runCmd("ssh-keygen", "-q", "-s", ca.Path, "-I", "ivan-laptop", "-n", "ivan@example.com", "-V", "-1d:+1d", user.Path+".pub"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(dir, "allowed_signers"), `*@example.com cert-authority `+ca.Public)
	a, err := signature.LoadAllowedSigners(allowed)
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("payout-plan v1\n")
	// ssh-keygen signs with the certificate when named by it (ivan-cert.pub).
	sig := signaturetest.Sign(t, signaturetest.Key{Path: user.Path + "-cert.pub"}, signature.NamespacePlan, msg)
	id, err := signature.Verify(msg, sig, signature.NamespacePlan, a, time.Now())
	if err != nil || id.Principal() != "ivan@example.com" {
		t.Fatalf("certificate signature: %+v, %v", id, err)
	}
	if out, err := signaturetest.Verify(t, allowed, "ivan@example.com", signature.NamespacePlan, sig, msg); err != nil {
		t.Fatalf("ssh-keygen -Y verify agrees: %v: %s", err, out)
	}
	if _, err := signature.Verify(msg, sig, signature.NamespacePlan, a, time.Now().Add(72*time.Hour)); !errors.Is(err, signature.ErrUnknownKey) {
		t.Errorf("after the certificate expired: %v, want ErrUnknownKey", err)
	}
	other := signaturetest.WriteAllowedSigners(t, filepath.Join(dir, "other_signers"), `*@example.org cert-authority `+ca.Public)
	b, err := signature.LoadAllowedSigners(other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signature.Verify(msg, sig, signature.NamespacePlan, b, time.Now()); !errors.Is(err, signature.ErrUnknownKey) {
		t.Errorf("a principal the line does not allow: %v, want ErrUnknownKey", err)
	}
}
