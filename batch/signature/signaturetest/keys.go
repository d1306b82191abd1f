package signaturetest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// RequireSSHKeygen skips the test when ssh-keygen is not installed, and fails it instead under
// CI (CI=true), where it must be.
func RequireSSHKeygen(tb testing.TB) {
	tb.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("ssh-keygen is not installed (apt-get install openssh-client): %v", err)
		}
		tb.Skip("ssh-keygen is not installed (apt-get install openssh-client): the signature tests need it")
	}
}

// Key is a key pair made by ssh-keygen: Path the private key file, Public its public line.
type Key struct {
	Path   string
	Public string
}

// NewKey makes an unencrypted ed25519 key named name in dir.
func NewKey(tb testing.TB, dir, name string) Key {
	tb.Helper()
	RequireSSHKeygen(tb)
	path := filepath.Join(dir, name)
	run(tb, nil, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", path)
	pub, err := os.ReadFile(path + ".pub")
	if err != nil {
		tb.Fatal(err)
	}
	return Key{Path: path, Public: strings.TrimSpace(string(pub))}
}

// AllowedLine is an allowed_signers line giving principals (comma separated) the key k.
func (k Key) AllowedLine(principals string) string {
	return principals + " " + k.Public
}

// WriteAllowedSigners writes lines as an allowed_signers file at path, mode 0644.
func WriteAllowedSigners(tb testing.TB, path string, lines ...string) string {
	tb.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// Sign signs message in namespace with ssh-keygen -Y sign reading it on stdin, and returns what
// it writes on stdout: the armored signature.
func Sign(tb testing.TB, k Key, namespace string, message []byte) []byte {
	tb.Helper()
	return run(tb, message, "ssh-keygen", "-q", "-Y", "sign", "-f", k.Path, "-n", namespace)
}

// Verify runs ssh-keygen -Y verify and returns its error and output.
func Verify(tb testing.TB, allowedSigners, principal, namespace string, sig, message []byte) (string, error) {
	tb.Helper()
	sigPath := filepath.Join(tb.TempDir(), "verify.sig")
	if err := os.WriteFile(sigPath, sig, 0o600); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", allowedSigners, "-I", principal, "-n", namespace, "-s", sigPath)
	cmd.Stdin = bytes.NewReader(message)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func run(tb testing.TB, stdin []byte, name string, args ...string) []byte {
	tb.Helper()
	cmd := exec.Command(name, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatal(fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, stderr.String()))
	}
	return stdout.Bytes()
}
