package untrusted_test

import (
	"bytes"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/payout/payout/batch/untrusted"
)

func TestReadSmallRefusesWhatIsNotASmallRegularFile(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(path("ok"), []byte("signature"), 0o600))
	must(os.WriteFile(path("big"), bytes.Repeat([]byte("x"), 1025), 0o600))
	must(syscall.Mkfifo(path("fifo"), 0o600))
	must(os.Mkdir(path("folder"), 0o700))
	must(os.Symlink("/dev/zero", path("zero")))
	must(os.Symlink(path("nowhere"), path("dangling")))
	must(os.Symlink(path("ok"), path("link")))

	for _, tc := range []struct {
		name string
		want error
	}{
		{"ok", nil}, {"link", nil}, {"big", untrusted.ErrTooLarge}, {"fifo", untrusted.ErrNotRegular},
		{"folder", untrusted.ErrNotRegular}, {"zero", untrusted.ErrNotRegular}, {"dangling", fs.ErrNotExist},
	} {
		for _, read := range []func(string, int64) ([]byte, error){untrusted.ReadSmall, untrusted.ReadSmallOwned} {
			data, err := read(path(tc.name), 1024)
			switch {
			case tc.want == nil && (err != nil || string(data) != "signature"):
				t.Errorf("%s: %q, %v; want its text", tc.name, data, err)
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Errorf("%s: %v; want %v", tc.name, err, tc.want)
			case err != nil && !strings.Contains(err.Error(), path(tc.name)):
				t.Errorf("%s: %q does not name the file", tc.name, err)
			}
		}
	}
}

// A link another account made, anywhere on the path, or links to a file another account owns,
// are refused by OpenOwned; Open follows them.
func TestOpenOwnedRefusesAnotherAccountsLink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making files owned by another account needs root")
	}
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	const nobody = 65534
	must(os.WriteFile(path("secret"), []byte("token"), 0o600))
	must(os.Mkdir(path("real"), 0o755))
	must(os.WriteFile(path("real/nov.csv"), []byte("ref\n"), 0o600))
	must(os.WriteFile(path("theirs.csv"), []byte("ref\n"), 0o644))
	must(os.Chown(path("theirs.csv"), nobody, nobody))
	must(os.Symlink(path("secret"), path("planted.csv")))
	must(os.Lchown(path("planted.csv"), nobody, nobody))
	must(os.Symlink(path("real"), path("drop")))
	must(os.Lchown(path("drop"), nobody, nobody))
	must(os.Symlink(path("theirs.csv"), path("mine.csv")))
	must(os.Symlink(path("real/nov.csv"), path("own.csv")))

	for _, tc := range []struct{ name, want string }{
		{"planted.csv", "planted.csv is a symbolic link owned by nobody (uid 65534), not by you or root"},
		{"drop/nov.csv", "drop/nov.csv leads through the symbolic link " + path("drop") + ", owned by nobody"},
		{"mine.csv", "mine.csv is a symbolic link to " + path("theirs.csv") + ", which is owned by nobody"},
	} {
		f, _, err := untrusted.OpenOwned(path(tc.name))
		if err == nil {
			f.Close()
		}
		if !errors.Is(err, untrusted.ErrForeignLink) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("OpenOwned(%s): %v; want %q", tc.name, err, tc.want)
		}
		if f, _, err := untrusted.Open(path(tc.name)); err != nil {
			t.Errorf("Open(%s): %v", tc.name, err)
		} else {
			f.Close()
		}
	}
	for _, name := range []string{"own.csv", "theirs.csv", "real/nov.csv", "real/../real/nov.csv"} {
		f, _, err := untrusted.OpenOwned(path(name))
		if err != nil {
			t.Errorf("OpenOwned(%s): %v", name, err)
			continue
		}
		f.Close()
	}
}

// A socket is named for what it is, not by the error opening one gives.
func TestOpenNamesASocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sig")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := untrusted.ReadSmall(path, 1024); !errors.Is(err, untrusted.ErrNotRegular) || !strings.Contains(err.Error(), "is a socket") {
		t.Errorf("ReadSmall of a socket: %v", err)
	}
}
