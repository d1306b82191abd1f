package ledger_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payout/payout/ledger"
)

func TestCreateMakesFilesPrivate(t *testing.T) {
	t.Parallel()
	db, path := mustOpen(t)
	seed(t, db, "r1", 1) // so that the WAL and the shared-memory index exist
	for _, name := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if mode := fi.Mode().Perm(); mode != 0o600 {
			t.Errorf("%s: mode %o, want 600", filepath.Base(name), mode)
		}
	}
}

func TestCreateRefusesAnExistingFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, path := mustOpen(t)
	seed(t, db, "r1", 3)
	db.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	orphan := filepath.Join(dir, "orphan.db")
	if err := os.WriteFile(orphan+"-wal", []byte("frames of a removed ledger"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, empty, orphan} {
		db, err := ledger.Create(ctx, p, ledger.Options{})
		if err == nil {
			db.Close()
		}
		if !errors.Is(err, ledger.ErrExists) {
			t.Errorf("Create(%s): %v, want ErrExists", filepath.Base(p), err)
		}
	}
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(before, after) {
		t.Errorf("Create changed the existing ledger (%v)", err)
	}
	if fi, err := os.Stat(empty); err != nil || fi.Size() != 0 {
		t.Errorf("Create wrote into the empty file: %v %v", fi, err)
	}
	if _, err := os.Stat(orphan); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Create made %s beside a leftover -wal file: %v", orphan, err)
	}
	db = openAt(t, path)
	if got := mustGet(t, db, "r1-ref-2"); got.Ref != "r1-ref-2" {
		t.Errorf("ledger lost its rows: %+v", got)
	}
}

func TestOpenNeverCreatesALedger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want error
	}{{missing, ledger.ErrNoLedger}, {empty, ledger.ErrEmptyLedger}} {
		db, err := ledger.Open(ctx, c.path, ledger.Options{})
		if err == nil {
			db.Close()
		}
		var oe *ledger.OpenError
		if !errors.Is(err, c.want) || !errors.As(err, &oe) || !filepath.IsAbs(oe.Path) {
			t.Errorf("Open(%s): %v, want %v naming the absolute path", filepath.Base(c.path), err, c.want)
		}
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open made %s: %v", missing, err)
	}
	if fi, err := os.Stat(empty); err != nil || fi.Size() != 0 {
		t.Errorf("Open wrote into the empty file: %v %v", fi, err)
	}
	if err := ledger.Probe(empty); !errors.Is(err, ledger.ErrEmptyLedger) {
		t.Errorf("Probe(empty): %v", err)
	}
}

func TestOpenRefusesAFileThatIsNotALedger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	text := filepath.Join(dir, "payroll.csv")
	if err := os.WriteFile(text, []byte("external_invoice_ref,amount\nA-1,10.00\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.db")
	sdb, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sdb.Exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('kept')"); err != nil {
		t.Fatal(err)
	}
	sdb.Close()
	for _, p := range []string{text, other, dir} {
		db, err := ledger.Open(ctx, p, ledger.Options{})
		if err == nil {
			db.Close()
		}
		if !errors.Is(err, ledger.ErrNotLedger) {
			t.Errorf("Open(%s): %v, want ErrNotLedger", filepath.Base(p), err)
		}
	}
	// Someone else's database is left as it was: not switched to WAL, not given the schema.
	sdb, err = sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	var mode string
	var tables int
	if err := sdb.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if err := sdb.QueryRow("SELECT count(*) FROM sqlite_master WHERE type = 'table'").Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if mode != "delete" || tables != 1 {
		t.Errorf("Open changed another program's database: journal_mode %s, %d tables", mode, tables)
	}
}

// TestQuickCheckFindsDamageAnywhere: damage in the middle of the file, on pages that opening
// for paying does not read, is found by the full check.
func TestQuickCheckFindsDamageAnywhere(t *testing.T) {
	t.Parallel() // long, on a ledger of its own: beside the other long ones
	ctx := context.Background()
	db, path := mustOpen(t)
	seed(t, db, "r1", 2000)
	if err := db.QuickCheck(ctx); err != nil {
		t.Fatalf("QuickCheck refused a sound ledger: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	damagePages(t, path)
	db, err := ledger.Open(ctx, path, ledger.Options{Verify: true})
	if err != nil {
		t.Fatalf("opening for paying reads no page in the middle, yet: %v", err)
	}
	defer db.Close()
	err = db.QuickCheck(ctx)
	if !errors.Is(err, ledger.ErrDamaged) || !ledger.Damaged(err) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "quick_check") {
		t.Errorf("QuickCheck of a damaged ledger: %v, want ErrDamaged naming %s and quick_check's findings", err, path)
	}
}

// damagePages writes garbage over a few pages in the middle of a closed ledger (past page 1, so
// that SQLite still opens it), as a bad disk block or a half-copied backup would.
func damagePages(tb testing.TB, path string) {
	tb.Helper()
	const pageSize = 4096
	fi, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	pages := fi.Size() / pageSize
	if pages < 8 {
		tb.Fatalf("%s has %d pages: too few to damage the middle", path, pages)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	garbage := bytes.Repeat([]byte{0xA5, 0x5A, 0xFF, 0x00}, 3*pageSize/4)
	if _, err := f.WriteAt(garbage, pages/2*pageSize); err != nil {
		tb.Fatal(err)
	}
}

func TestOpenWarnsWhenOthersCanReadTheLedger(t *testing.T) {
	t.Parallel()
	db, path := mustOpen(t)
	db.Close()
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	db, err := ledger.Open(context.Background(), path, ledger.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if !strings.Contains(logs.String(), "chmod 600") || !strings.Contains(logs.String(), "mode=0644") {
		t.Errorf("no warning about a ledger of mode 644: %q", logs.String())
	}
}
