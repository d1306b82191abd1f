package ledger_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/payout/payout/ledger"
)

// closedLedger makes a ledger of n payouts and closes it, which folds its write-ahead log into
// the file: what a backup copy or a ledger between runs looks like.
func closedLedger(t *testing.T, n int) ([]ledger.Payout, string) {
	t.Helper()
	db, path := mustOpen(t)
	ps := seed(t, db, "r1", n)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Fatalf("%s-wal is left after Close", path)
	}
	return ps, path
}

func openVerified(t *testing.T, path string) error {
	t.Helper()
	db, err := ledger.Open(context.Background(), path, ledger.Options{Verify: true})
	if err == nil {
		db.Close()
	}
	return err
}

func TestOpenVerifyRefusesATruncatedLedger(t *testing.T) {
	t.Parallel() // long, on a ledger of its own: beside the other long ones
	_, path := closedLedger(t, 2000)
	if err := openVerified(t, path); err != nil {
		t.Fatalf("a sound ledger was refused: %v", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// Cut at a page boundary, as a copy that stopped between two blocks is.
	if err := os.Truncate(path, fi.Size()/4096/2*4096); err != nil {
		t.Fatal(err)
	}
	err = openVerified(t, path)
	if !errors.Is(err, ledger.ErrDamaged) || !strings.Contains(err.Error(), "cut short") || !strings.Contains(err.Error(), path) {
		t.Errorf("Open(Verify) of a truncated ledger: %v, want ErrDamaged saying it was cut short", err)
	}
}

func TestOpenVerifyRefusesABadHeader(t *testing.T) {
	t.Parallel()
	_, path := closedLedger(t, 10)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The payload fractions, which every SQLite file has at 64, 32, 32.
	if _, err := f.WriteAt([]byte{0, 0, 0}, 21); err != nil {
		t.Fatal(err)
	}
	f.Close()
	err = openVerified(t, path)
	if !errors.Is(err, ledger.ErrDamaged) || !strings.Contains(err.Error(), "bad SQLite header") {
		t.Errorf("Open(Verify) of a bad header: %v, want ErrDamaged saying the header is bad", err)
	}
}

// TestDamageOnAPageReadIsRefused: a page of payouts overwritten with garbage is not seen when
// the ledger opens, but the first look-up that reads it fails as damage, never as "not there".
func TestDamageOnAPageReadIsRefused(t *testing.T) {
	t.Parallel() // long, on a ledger of its own: beside the other long ones
	ps, path := closedLedger(t, 2000)
	damageLeaf(t, path, "payouts")
	ctx := context.Background()
	db, err := ledger.Open(ctx, path, ledger.Options{Verify: true})
	if err != nil {
		t.Fatalf("opening for paying reads no payout page, yet: %v", err)
	}
	defer db.Close()
	refs := make([]string, len(ps))
	for i, p := range ps {
		refs[i] = p.Ref
	}
	found, err := db.Lookup(ctx, refs, ledger.WholePayouts)
	if !ledger.Damaged(err) {
		t.Errorf("Lookup of every payout: %d found, err %v; want damage reported", len(found), err)
	}
}

// damageLeaf writes garbage over a leaf page in the middle of table (or index) name of the
// closed ledger at path.
func damageLeaf(tb testing.TB, path, name string) {
	tb.Helper()
	sdb, err := sql.Open("sqlite", path+"?_pragma=query_only(1)")
	if err != nil {
		tb.Fatal(err)
	}
	var page, pageSize int64
	err = errors.Join(sdb.QueryRow(`SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf'
		ORDER BY pageno LIMIT 1 OFFSET (SELECT count(*) / 2 FROM dbstat WHERE name = ? AND pagetype = 'leaf')`, name, name).Scan(&page),
		sdb.QueryRow("PRAGMA page_size").Scan(&pageSize), sdb.Close())
	if err != nil {
		tb.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xA5, 0x5A, 0xFF, 0x00}, int(pageSize/4)), (page-1)*pageSize); err != nil {
		tb.Fatal(err)
	}
}
