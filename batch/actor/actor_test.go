package actor_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/payout/payout/batch/actor"
)

// noPasswdUID is an account with no passwd entry, as a shell account made by hand may be.
const noPasswdUID = 54321

// TestMain lets TestActorIsTheAccountByItsUID run this test binary as another account, to print
// the actor that account is recorded as.
func TestMain(m *testing.M) {
	if os.Getenv("PAYOUT_TEST_PRINT_ACTOR") == "1" {
		os.Stdout.WriteString("ACTOR=" + actor.Current() + "\n")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The actor the trail records is the account the process runs as, looked up by its uid, and
// never $USER, which anyone sets: an account without a passwd entry is "uid N", whatever USER
// says, and always the same.
func TestActorIsTheAccountByItsUID(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("running a process as another uid needs root (CI runs as root)")
	}
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} { // the account must reach the binary
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "batch.test")
	copyExecutable(t, self, bin)
	cmd := exec.Command(bin)
	cmd.Dir = dir
	cmd.Env = []string{"PAYOUT_TEST_PRINT_ACTOR=1", "USER=bob", "LOGNAME=bob", "HOME=" + dir}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: noPasswdUID, Gid: noPasswdUID}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the test binary as uid %d: %v\n%s", noPasswdUID, err, out)
	}
	_, actor, _ := strings.Cut(string(out), "ACTOR=")
	actor, _, _ = strings.Cut(actor, "\n")
	if name, _, _ := strings.Cut(actor, "@"); name != "uid 54321" {
		t.Errorf("Current() of uid %d with USER=bob = %q, want uid 54321@host", noPasswdUID, actor)
	}
}

func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
