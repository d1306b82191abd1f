package main_test

import (
	"strings"
	"testing"

	"github.com/payout/payout/internal/pgtest"
)

// A team's ledger in PostgreSQL, named by PAYOUT_LEDGER: init makes it once, and status, policy
// and audit verify use it as they use a file; every message names the URL without a password.
func TestCommandsOnAPostgresLedger(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	u := newUserWithoutLedger(t, newSandbox(t))
	url := pgtest.New(t)
	u.env = append(u.env, "PAYOUT_LEDGER="+url)
	if _, errOut, code := u.run("status"); code != 2 || !strings.Contains(errOut, "run `payout init` with that URL") {
		t.Errorf("status before init: exit %d, %s; want 2 saying to run payout init with that URL", code, errOut)
	}
	if out, errOut, code := u.run("init"); code != 0 || !strings.Contains(out, "created an empty ledger in postgres://") {
		t.Fatalf("init: exit %d: %s %s", code, out, errOut)
	}
	if _, errOut, code := u.run("init"); code != 2 || !strings.Contains(errOut, "already holds a payout ledger") {
		t.Errorf("init again: exit %d, %s; want 2, refused", code, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"status"}, ""},
		{[]string{"policy", "--approvals", "2"}, ""},
		{[]string{"policy"}, "2 signatures"},
		{[]string{"audit", "verify"}, "intact"},
		{[]string{"purge", "--before", "2026-01-01"}, "write-ahead log, its archive and its backups keep them"},
	} {
		out, errOut, code := u.run(c.args...)
		if code != 0 || !strings.Contains(out, c.want) {
			t.Errorf("payout %s: exit %d: %s %s; want exit 0 and %q", strings.Join(c.args, " "), code, out, errOut, c.want)
		}
	}
}

// A password in --ledger is refused before anything is done: every local user can read argv.
// One in PAYOUT_LEDGER is used, and never shown.
func TestALedgerPasswordIsNeverShown(t *testing.T) {
	t.Parallel()
	u := newUserWithoutLedger(t, newSandbox(t))
	url := pgtest.New(t)
	withPassword := strings.Replace(url, "postgres://postgres@", "postgres://postgres:s3cr3t-pw@", 1)
	out, errOut, code := u.run("status", "--ledger", withPassword)
	if code != 2 || !strings.Contains(errOut, "PGPASSFILE") || strings.Contains(out+errOut, "s3cr3t-pw") {
		t.Errorf("--ledger with a password: exit %d, %s %s; want 2, pointing to PGPASSFILE, without the password", code, out, errOut)
	}
	u.env = append(u.env, "PAYOUT_LEDGER="+withPassword)
	for i, args := range [][]string{{"status"}, {"init"}, {"init"}, {"audit", "verify"}} {
		out, errOut, _ := u.run(args...)
		if strings.Contains(out+errOut, "s3cr3t-pw") {
			t.Errorf("payout %s showed the password: %s %s", strings.Join(args, " "), out, errOut)
		}
		if i < 3 && !strings.Contains(out+errOut, "postgres://postgres@") {
			t.Errorf("payout %s did not name the ledger: %s %s", strings.Join(args, " "), out, errOut)
		}
	}
}
