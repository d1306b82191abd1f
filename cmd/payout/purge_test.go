package main_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/internal/fakeclock"
	"github.com/payout/payout/ledger"
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

// paidLastYear makes u's ledger, as payout init did in 2025, and records in it, as a run and its
// callbacks did then, a payout to each name and account of people, and the name the bank holds
// for it, in capitals.
func paidLastYear(t *testing.T, u *user, people [][2]string) {
	t.Helper()
	paidLastYearIn(t, filepath.Join(u.dir, "payout-ledger.db"), people)
}

// paidLastYearIn is paidLastYear in the ledger at where (a file, or a postgres:// URL), which
// it makes: its history is last year's from its first event, since audit verify names an event
// dated before the one ahead of it.
func paidLastYearIn(t *testing.T, where string, people [][2]string) {
	t.Helper()
	ctx := context.Background()
	clock := fakeclock.New(time.Date(2025, 1, 1, 8, 0, 0, 0, time.UTC))
	db, err := ledger.Create(ctx, where, ledger.Options{Now: clock.Ticking(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.AddRun(ctx, ledger.Run{ID: "run-2025", Kind: "run", File: "old.csv", FileSHA256: strings.Repeat("0", 64),
		StartedAt: clock.Now(), Status: "running"}); err != nil {
		t.Fatal(err)
	}
	var fresh []ledger.Payout
	var rows []ledger.RunRow
	for i, p := range people {
		ref := fmt.Sprintf("GONE-%d", i+1)
		fresh = append(fresh, ledger.Payout{Ref: ref, RunID: "run-2025", Line: i + 2, Recipient: p[0], ProviderID: 1, Bank: "Maybank",
			Account: p[1], Amount: decimal.NewFromInt(int64(10 * (i + 1))), State: ledger.Ready})
		rows = append(rows, ledger.RunRow{Line: i + 2, Ref: ref, Recipient: p[0], ProviderID: 1, Bank: "Maybank", Account: p[1],
			Amount: fresh[i].Amount.StringFixed(2)})
	}
	if err := db.Record(ctx, "run-2025", rows, fresh); err != nil {
		t.Fatal(err)
	}
	for _, p := range fresh {
		if err := db.Apply(ctx, ledger.Change{Ref: p.Ref, From: ledger.Ready, To: ledger.Submitting, CountAttempt: true},
			ledger.Change{Ref: p.Ref, From: ledger.Submitting, To: ledger.Submitted, InvoiceNo: "POI-" + p.Ref},
			ledger.Change{Ref: p.Ref, From: ledger.Submitted, To: ledger.Succeeded, DisplayName: strings.ToUpper(p.Recipient),
				NameCheck: ledger.NameMatch, Detail: "callback: SUCCESS"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.FinishRun(ctx, "run-2025", "finished", 0, clock.Now()); err != nil {
		t.Fatal(err)
	}
}

func TestPurgeLeavesNoNameOrAccountInTheLedgerFilesWhileCallbacksHoldsItOpen(t *testing.T) {
	t.Parallel()
	u := newUserWithoutLedger(t, newSandbox(t))
	secrets := []string{"Zulkarnain Wirawan", "Kavitha Subramaniam", "7770001234", "7770005678"}
	paidLastYear(t, u, [][2]string{{secrets[0], secrets[2]}, {secrets[1], secrets[3]}})
	if out, errOut, code := u.run("audit", "verify"); code != 0 {
		t.Fatalf("audit verify before the purge: exit %d: %s %s", code, out, errOut)
	}
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
	t.Parallel() // a ledger, a sandbox and folders of its own
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
