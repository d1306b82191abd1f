package ledger_test

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// TRUNCATE, which passes the row triggers that keep the chain append-only, is refused on the
// tables that decide money, as their DELETE is.
func TestPostgresRefusesTruncate(t *testing.T) {
	t.Parallel()
	db, url := mustCreatePG(t)
	settle(t, db, seed(t, db, "r1", 4))
	must(t, db.Close())
	raw, err := sql.Open("pgx", url)
	must(t, err)
	defer raw.Close()
	for _, table := range []string{"events", "row_events", "approvals", "payouts"} {
		if _, err := raw.Exec(`TRUNCATE ` + table + ` CASCADE`); err == nil || !strings.Contains(err.Error(), "append-only") && !strings.Contains(err.Error(), "never deleted") {
			t.Errorf("TRUNCATE %s: %v, want refused", table, err)
		}
	}
}

// What someone with the ledger's database role can do through SQL besides editing a column (which
// cmd/payout's TestAuditVerifyNamesAHandEditOfEveryColumnOnPostgres tries column by column), each
// on a ledger of its own, and what VerifyChain names. The rows of processes and rate_limits are
// no money and outside the trail: a row added there is not named (see want "").
func TestPostgresVerifyNamesWhatAnInsiderDoes(t *testing.T) {
	t.Parallel() // long, on a ledger of its own: beside the other long ones
	for _, tc := range []struct {
		name  string
		edit  func(ref string, id int64) []string
		wants []string
	}{
		{"an event deleted", func(_ string, id int64) []string {
			return []string{`ALTER TABLE events DISABLE TRIGGER events_no_delete`, fmt.Sprintf(`DELETE FROM events WHERE id = %d`, id),
				`ALTER TABLE events ENABLE TRIGGER events_no_delete`}
		}, []string{"are missing (deleted)"}},
		{"a payout inserted", func(ref string, _ int64) []string {
			return []string{`INSERT INTO payouts (ref, run_id, line, recipient, provider_id, bank, account, amount, description, state, created_at, updated_at)
				VALUES ('FORGED-1', 'r1', 99, 'Mallory', 1, 'Maybank', '0123456789', '500.00', '', 'READY', '2026-11-20T00:00:00Z', '2026-11-20T00:00:00Z')`}
		}, []string{"payout FORGED-1: it has no events (inserted by hand)"}},
		// TRUNCATE is refused (TestPostgresRefusesTruncate); with its guard off for the while:
		{"events truncated", func(string, int64) []string {
			return []string{`ALTER TABLE events DISABLE TRIGGER events_no_truncate`, `TRUNCATE events`,
				`ALTER TABLE events ENABLE TRIGGER events_no_truncate`}
		}, []string{"payout r1-ref-0: it has no events (inserted by hand)"}},
		{"ledger_quote redefined", func(string, int64) []string {
			return []string{`CREATE OR REPLACE FUNCTION ledger_quote(v text) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'x' $$`}
		}, []string{"schema: function ledger_quote(v text) differs from what the migrations make (changed by hand)"}},
		{"the state totals' trigger body changed", func(string, int64) []string {
			return []string{`CREATE OR REPLACE FUNCTION ledger_state_totals() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`}
		}, []string{"schema: function ledger_state_totals() differs from what the migrations make (changed by hand)"}},
		{"a guard trigger disabled", func(string, int64) []string {
			return []string{`ALTER TABLE events DISABLE TRIGGER events_no_update`}
		}, []string{"schema: trigger events_no_update differs from what the migrations make (changed by hand)"}},
		{"a trigger set to fire only under replication", func(string, int64) []string {
			return []string{`ALTER TABLE payouts ENABLE REPLICA TRIGGER state_totals_update`}
		}, []string{"schema: trigger state_totals_update differs"}},
		{"a rule that drops writes", func(string, int64) []string {
			return []string{`CREATE RULE keep_quiet AS ON INSERT TO events DO INSTEAD NOTHING`}
		}, []string{"schema: rule events.keep_quiet is not made by the migrations (added by hand)"}},
		{"a policy hiding a payout from the verifier", func(ref string, _ int64) []string {
			return []string{`ALTER TABLE payouts ENABLE ROW LEVEL SECURITY`, `ALTER TABLE payouts FORCE ROW LEVEL SECURITY`,
				fmt.Sprintf(`CREATE POLICY hide ON payouts USING (ref <> '%s')`, ref)}
		}, []string{"schema: table payouts differs from what the migrations make (changed by hand)",
			"schema: policy payouts.hide is not made by the migrations (added by hand)"}},
		{"events made unlogged", func(string, int64) []string {
			return []string{`ALTER TABLE events SET UNLOGGED`}
		}, []string{"schema: table events differs from what the migrations make (changed by hand)"}},
		{"rows in the tables that are no money", func(string, int64) []string {
			return []string{`INSERT INTO processes (id, claimant, host, pid, started, lock_key, backend_pid) VALUES ('p1', 'x', 'h', 1, now(), 1, 1)`,
				`INSERT INTO rate_limits (merchant, pause_until) VALUES ('m', now() + interval '1 day')`}
		}, []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, url := mustCreatePG(t)
			ps := seed(t, db, "r1", 4)
			settle(t, db, ps)
			wantIntact(t, verify(t, db))
			db = pgEdit(t, db, url, tc.edit(ps[1].Ref, lastEventOf(t, db, ps[1].Ref)-1)...)
			rep := verify(t, db)
			for _, w := range tc.wants {
				if w == "" {
					wantIntact(t, rep)
				} else if !findingAt(rep, 0, w) {
					t.Errorf("findings %v\nwant one naming %q", rep.Findings, w)
				}
			}
		})
	}
}
