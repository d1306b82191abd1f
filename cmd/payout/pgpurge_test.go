package main_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/payout/payout/internal/pgtest"
)

// filesHolding names the files under dir that hold any of secrets, compared case-insensitively.
func filesHolding(t *testing.T, dir string, secrets []string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		data = bytes.ToLower(data)
		for _, s := range secrets {
			if bytes.Contains(data, []byte(strings.ToLower(s))) {
				found = append(found, strings.TrimPrefix(path, dir+"/")+": "+s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// On a PostgreSQL ledger, purge masks the names and account numbers of old payouts and VACUUM
// FULL rewrites the tables: the database's files (base/<its oid>, its tables, their TOAST and
// indexes, and the catalog's statistics) no longer hold them. The write-ahead log (pg_wal) does
// until the server recycles its segments, as the archive and backups do until they rotate out:
// purge says so.
func TestPurgeLeavesNoNameOrAccountInAPostgresDatabase(t *testing.T) {
	// Not in parallel: it reads the files of the cluster every PostgreSQL test of this binary
	// shares, which the others fill with the same names, before any of them starts.
	u := newUserWithoutLedger(t, newSandbox(t))
	where := pgtest.New(t)
	u.env = append(u.env, "PAYOUT_LEDGER="+where)
	secrets := []string{"Zulkarnain Wirawan", "Kavitha Subramaniam", "7770001234", "7770005678"}
	paidLastYearIn(t, where, [][2]string{{secrets[0], secrets[2]}, {secrets[1], secrets[3]}})
	db := pgOpen(t, where)
	defer db.Close()
	// The statistics autovacuum gathers on a busy ledger: pg_statistic keeps sample values.
	pgMust(t, db, `ANALYZE`, `CHECKPOINT`)
	var oid int
	if err := db.QueryRow(`SELECT oid FROM pg_database WHERE datname = current_database()`).Scan(&oid); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(pgtest.DataDir(t), "base", strconv.Itoa(oid))
	if found := filesHolding(t, base, secrets); len(found) < len(secrets) {
		t.Fatalf("before the purge the database's files hold only %v of %v: the test cannot see what it looks for", found, secrets)
	}
	out, errOut, code := u.run("purge", "--before", "2026-01-01")
	if code != 0 || !strings.HasPrefix(out, "purged 2 payout(s)") || !strings.Contains(out+errOut, "write-ahead log") {
		t.Fatalf("purge: exit %d: %s %s", code, out, errOut)
	}
	pgMust(t, db, `CHECKPOINT`) // the rewritten files on disk, as the server writes them in time
	if found := filesHolding(t, base, secrets); len(found) > 0 {
		t.Errorf("after the purge the database's files still hold %v", found)
	}
	t.Logf("the write-ahead log still holds %v", filesHolding(t, filepath.Join(pgtest.DataDir(t), "pg_wal"), secrets))
	if out, errOut, code := u.run("audit", "verify"); code != 0 {
		t.Errorf("audit verify after the purge: exit %d: %s %s", code, out, errOut)
	}
}
