package atomicfile_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/payout/payout/batch/atomicfile"
)

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	}
}

// onlyFile fails unless dir holds exactly the file name: no temporary file is left.
func onlyFile(t *testing.T, dir, name string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != name {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("directory holds %q, want only %q", names, name)
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteReplacesWithModeAndLeavesNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.csv")
	if err := atomicfile.WriteBytes(path, 0o644, []byte("old")); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Write(path, 0o600, writeString("new")); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, path); got != "new" {
		t.Errorf("content %q, want %q", got, "new")
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	onlyFile(t, dir, "report.csv")
}

func TestWriteFailureKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "metrics.prom")
	if err := atomicfile.WriteBytes(path, 0o644, []byte("old")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := atomicfile.Write(path, 0o644, func(w io.Writer) error {
		if _, err := io.WriteString(w, "half"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the writer's error", err)
	}
	if got := readString(t, path); got != "old" {
		t.Errorf("content %q after a failed write, want the old file", got)
	}
	onlyFile(t, dir, "metrics.prom")
}

func TestWriteRenameFailureLeavesNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "busy")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Write(path, 0o600, writeString("data")); err == nil {
		t.Fatal("Write over a non-empty directory succeeded")
	}
	onlyFile(t, dir, "busy")
}

func TestWriteNewNeverReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "payout-template.xlsx")
	if err := atomicfile.WriteNew(path, 0o644, writeString("first")); err != nil {
		t.Fatal(err)
	}
	err := atomicfile.WriteNew(path, 0o644, writeString("second"))
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second WriteNew: err = %v, want fs.ErrExist", err)
	}
	if got := readString(t, path); got != "first" {
		t.Errorf("content %q, want the first file kept", got)
	}
	onlyFile(t, dir, "payout-template.xlsx")
}
