package main_test

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/api/sandbox"
)

// ledgerBytesHolding names which of the ledger's files (the database and its -wal) hold any of
// secrets, compared case-insensitively: the bank's copy of a name is in capitals.
func ledgerBytesHolding(t *testing.T, u *user, secrets []string) []string {
	t.Helper()
	var found []string
	for _, name := range []string{"payout-ledger.db", "payout-ledger.db-wal"} {
		data, err := os.ReadFile(filepath.Join(u.dir, name))
		if os.IsNotExist(err) {
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		data = bytes.ToLower(data)
		for _, s := range secrets {
			if bytes.Contains(data, []byte(strings.ToLower(s))) {
				found = append(found, name+": "+s)
			}
		}
	}
	return found
}

func TestPurgeLeavesNoNameOrAccountInTheLedgerFilesWhileCallbacksHoldsItOpen(t *testing.T) {
	clock := &settableClock{t: time.Now()}
	sb := sandbox.New(sandbox.Options{AuthToken: "e2e-token", HashKey: []byte("e2e-hash-key"), Now: clock.Now,
		SettleAfter: time.Hour, SettleInterval: -1})
	t.Cleanup(sb.Close)
	u := newUser(t, sb)
	file := filepath.Join(u.dir, "old.csv")
	secrets := []string{"Zulkarnain Wirawan", "Kavitha Subramaniam", "7770001234", "7770005678"}
	if err := os.WriteFile(file, []byte("external_invoice_ref,recipient_reference,bank,third_party_account_no,amount\n"+
		"GONE-1,Zulkarnain Wirawan,Maybank,7770001234,10.00\nGONE-2,Kavitha Subramaniam,Maybank,7770005678,20.00\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	paidRun(t, u, file)
	clock.add(2 * time.Hour)
	if out, errOut, code := u.run("reconcile"); code != 0 { // settles them, and records the names the bank holds
		t.Fatalf("reconcile exit %d: %s %s", code, out, errOut)
	}
	sqlOn(t, u, `UPDATE payouts SET updated_at = '2025-01-01T00:00:00.000000000Z'`)
	if found := ledgerBytesHolding(t, u, secrets); len(found) != len(secrets) {
		t.Fatalf("before the purge the ledger's files hold only %v of %v: the test cannot see what it looks for", found, secrets)
	}
	startServer(t, u, []string{"PAYOUT_HASH_KEY=e2e-hash-key"}, "callbacks", "--listen", "127.0.0.1:0")

	out, errOut, code := u.run("purge", "--before", "2026-01-01")
	if code != 0 || !strings.HasPrefix(out, "purged 2 payout(s)") {
		t.Fatalf("purge while callbacks runs: exit %d: %s %s", code, out, errOut)
	}
	if found := ledgerBytesHolding(t, u, secrets); len(found) > 0 {
		t.Errorf("after the purge the ledger's files still hold %v", found)
	}
	if out, errOut, code := u.run("audit", "verify"); code != 0 || !strings.HasPrefix(out, "intact: ") {
		t.Errorf("audit verify after the purge: exit %d: %s %s", code, out, errOut)
	}
}

func TestPurgeSaysWhenAReaderKeepsTheWALFromBeingEmptied(t *testing.T) {
	u, _, _ := settledRun(t)
	sqlOn(t, u, `UPDATE payouts SET updated_at = '2025-01-01T00:00:00.000000000Z'`)
	// Another process in the middle of a read: it reads the -wal until its transaction ends.
	reader, err := sql.Open("sqlite", filepath.Join(u.dir, "payout-ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	conn, err := reader.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var n int
	if _, err := conn.ExecContext(context.Background(), "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRowContext(context.Background(), "SELECT count(*) FROM events").Scan(&n); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := u.run("purge", "--before", "2026-01-01", "--wal-wait", "100ms")
	if code != 4 || !strings.HasPrefix(out, "purged 50 payout(s)") || !strings.Contains(errOut, "payout-ledger.db-wal holds") ||
		!strings.Contains(errOut, "run `payout purge --before 2026-01-01` again") {
		t.Errorf("purge while a reader holds the -wal: exit %d: %s %s", code, out, errOut)
	}
	if _, err := conn.ExecContext(context.Background(), "COMMIT"); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = u.run("purge", "--before", "2026-01-01")
	if code != 0 || !strings.HasPrefix(out, "purged 0 payout(s)") {
		t.Errorf("purge again once the reader is done: exit %d: %s %s", code, out, errOut)
	}
	if fi, err := os.Stat(filepath.Join(u.dir, "payout-ledger.db-wal")); err == nil && fi.Size() != 0 {
		t.Errorf("the -wal holds %d bytes after the second purge", fi.Size())
	}
}
