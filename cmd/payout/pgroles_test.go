package main_test

import (
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/internal/pgtest"
)

// An auditor's role that may read the ledger's tables and nothing more (no CREATE on the
// database, no write on any table) runs audit verify: the migrations' reference schema is made
// in its session's temporary schema and rolled back. It finds the ledger intact, and names a
// function redefined and a guard disabled by the owner's role, as the owner's verify does. It
// cannot pay.
func TestAuditVerifyWithAReadOnlyRole(t *testing.T) {
	t.Parallel()
	u, where := newPGUser(t)
	paidRun(t, u, samplePath(t))
	db := pgOpen(t, where)
	defer db.Close()
	var dbName string
	if err := db.QueryRow(`SELECT current_database()`).Scan(&dbName); err != nil {
		t.Fatal(err)
	}
	role := dbName + "_auditor"
	pgMust(t, db, `CREATE ROLE `+role+` LOGIN`, `GRANT CONNECT ON DATABASE `+dbName+` TO `+role,
		`GRANT USAGE ON SCHEMA public TO `+role, `GRANT SELECT ON ALL TABLES IN SCHEMA public TO `+role)
	t.Cleanup(func() {
		admin := pgOpen(t, where)
		defer admin.Close()
		pgMust(t, admin, `DROP OWNED BY `+role, `DROP ROLE `+role)
	})
	auditor := u.on(t, strings.Replace(where, "postgres://postgres@", "postgres://"+role+"@", 1))
	if out, errOut, code := auditor.run("audit", "verify"); code != 0 || !strings.Contains(out, "intact") {
		t.Fatalf("audit verify as a read-only role: exit %d: %s %s", code, out, errOut)
	}
	if out, errOut, code := auditor.run("run", samplePath(t)); code == 0 || !strings.Contains(out+errOut, "permission denied") {
		t.Errorf("run as the read-only role: exit %d, want refused by the server: %s %s", code, out, errOut)
	}
	pgMust(t, db, `CREATE OR REPLACE FUNCTION ledger_quote(v text) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'x' $$`,
		`ALTER TABLE events DISABLE TRIGGER events_no_update`)
	out, errOut, code := auditor.run("audit", "verify")
	for _, want := range []string{"schema: function ledger_quote(v text) differs", "schema: trigger events_no_update differs"} {
		if code != 4 || !strings.Contains(out, want) {
			t.Errorf("audit verify as a read-only role after the owner's edits: exit %d, want 4 naming %q: %s %s", code, want, out, errOut)
		}
	}
}

// The service's role as the roles guidance has it: a role that is no superuser and owns the
// ledger's database (and so, on PostgreSQL 15 and later, its public schema). It makes the
// ledger, pays, purges (VACUUM FULL of the ledger's tables and of pg_statistic, which only the
// database's owner may run) and verifies; a role that does not own the database is refused the
// purge's rewrite rather than told it happened.
func TestAServiceRoleThatOwnsTheDatabase(t *testing.T) {
	t.Parallel()
	u := newUserWithoutLedger(t, newSandbox(t))
	where := pgtest.New(t)
	db := pgOpen(t, where)
	defer db.Close()
	var dbName string
	if err := db.QueryRow(`SELECT current_database()`).Scan(&dbName); err != nil {
		t.Fatal(err)
	}
	svc, other := dbName+"_svc", dbName+"_other"
	pgMust(t, db, `CREATE ROLE `+svc+` LOGIN`, `CREATE ROLE `+other+` LOGIN`, `ALTER DATABASE `+dbName+` OWNER TO `+svc,
		`ALTER SCHEMA public OWNER TO `+svc)
	t.Cleanup(func() {
		admin := pgOpen(t, pgtest.Admin(t))
		defer admin.Close()
		pgMust(t, admin, `DROP DATABASE IF EXISTS `+dbName+` WITH (FORCE)`, `DROP ROLE `+svc, `DROP ROLE `+other)
	})
	u.env = append(u.env, "PAYOUT_LEDGER="+strings.Replace(where, "postgres://postgres@", "postgres://"+svc+"@", 1))
	today := time.Now().UTC().Format(time.DateOnly) // nothing is that old: the purge rewrites all the same
	for _, args := range [][]string{{"init"}, {"run", samplePath(t)}, {"purge", "--before", today}, {"audit", "verify"}} {
		if out, errOut, code := u.run(args...); code != 0 {
			t.Fatalf("payout %s as the database's owner: exit %d: %s %s", strings.Join(args, " "), code, out, errOut)
		}
	}
	pgMust(t, db, `GRANT ALL ON ALL TABLES IN SCHEMA public TO `+other, `GRANT USAGE ON SCHEMA public TO `+other)
	notOwner := u.on(t, strings.Replace(where, "postgres://postgres@", "postgres://"+other+"@", 1))
	if out, errOut, code := notOwner.run("purge", "--before", today); code == 0 || !strings.Contains(errOut, "does not own its database") {
		t.Errorf("purge as a role that does not own the database: exit %d, want refused saying so: %s %s", code, out, errOut)
	}
}
