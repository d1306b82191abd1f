package ledger_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A ledger made before the trail covered its other tables is upgraded with every row sealed and
// every payout's times and counters attested as they stood: it verifies intact, and an edit made
// after the upgrade is named.
func TestUpgradeBringsAnOlderLedgerIntoTheTrail(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "old.db")
	schema, err := os.ReadFile(filepath.Join("migrations", "0001_init.sql"))
	must(t, err)
	raw, err := sql.Open("sqlite", path)
	must(t, err)
	const t0, t1, t2 = "2026-01-01T00:00:00.000000000Z", "2026-01-01T00:00:01.000000000Z", "2026-01-01T00:00:02.000000000Z"
	for _, s := range []string{string(schema), `PRAGMA user_version = 1`,
		`INSERT INTO runs (id, kind, file, started_at, ended_at, status, exit_code) VALUES ('r0', 'run', 'nov.csv', '` + t0 + `', '` + t2 + `', 'finished', 4)`,
		`INSERT INTO run_rows VALUES ('r0', 3, 'old-2', 'Bala', 0, 'Maybank', '0123', '12.345', 'typo', 1, 'amount has 3 decimals', 0)`,
		`INSERT INTO payouts (ref, run_id, line, recipient, provider_id, bank, account, amount, description, state, invoice_no,
			attempts, not_found_count, first_not_found_at, last_error, created_at, updated_at)
			VALUES ('old-1', 'r0', 2, 'Siti', 7, 'Maybank', '5551234', '12.50', 'salary', 'SUCCEEDED', 'INV-9',
			2, 1, '` + t1 + `', 'HTTP 503', '` + t0 + `', '` + t2 + `')`,
		`INSERT INTO events (ref, run_id, at, from_state, to_state, detail, payload) VALUES
			('old-1', 'r0', '` + t0 + `', '', 'READY', 'recorded', ''),
			('old-1', 'r0', '` + t1 + `', 'READY', 'SUCCEEDED', 'paid', '{"account":"5551234"}')`,
		`INSERT INTO callbacks (received_at, invoice_no, verdict, payload) VALUES ('` + t2 + `', 'INV-X', 'unknown-invoice', '{"invoice_no":"INV-X"}')`,
	} {
		if _, err := raw.Exec(s); err != nil {
			t.Fatalf("%.60s: %v", s, err)
		}
	}
	must(t, raw.Close())
	db := openAt(t, path)
	rep := verify(t, db)
	wantIntact(t, rep)
	if rep.Events != 4 || rep.RowEvents != 4 {
		t.Errorf("verified %d events and %d row events, want 4 (two, the attestation and the policy's genesis) and 4 (run, line, callback, the line again with paid_elsewhere)", rep.Events, rep.RowEvents)
	}
	db = handEdit(t, db, path, `UPDATE payouts SET attempts = 0, last_error = ''`, `UPDATE callbacks SET invoice_no = 'INV-Y'`,
		`UPDATE run_rows SET account = '9999'`)
	rep = verify(t, db)
	for _, want := range []string{`payout old-1: attempts in the payouts table is "0", its events say "2"`,
		`payout old-1: last_error in the payouts table is "", its events say "HTTP 503"`,
		`callbacks row 000000000001: column invoice_no is 'INV-Y', row event`,
		`run_rows row r0/000000003: column account does not match the digest`} {
		if !findingAt(rep, 0, want) {
			t.Errorf("findings %v\nwant one naming %s", rep.Findings, want)
		}
	}
	if len(rep.Findings) != 4 {
		var texts []string
		for _, f := range rep.Findings {
			texts = append(texts, f.String())
		}
		t.Errorf("%d findings, want 4:\n%s", len(rep.Findings), strings.Join(texts, "\n"))
	}
}

// The schema is compared with what the migrations make: a guard trigger weakened, an index
// dropped and a table added by hand are each named.
func TestVerifyNamesSchemaChangesByHand(t *testing.T) {
	t.Parallel()
	db, path := mustOpen(t)
	settle(t, db, seed(t, db, "r1", 4))
	db = handEdit(t, db, path, `DROP TRIGGER row_events_no_delete`,
		`CREATE TRIGGER row_events_no_delete BEFORE DELETE ON row_events WHEN 0 BEGIN SELECT RAISE(ABORT, 'no'); END`,
		`DROP INDEX payouts_by_payee_digits`, `CREATE TABLE notes (ref TEXT, amount TEXT)`)
	rep := verify(t, db)
	for _, want := range []string{"schema: trigger row_events_no_delete differs from what the migrations make (changed by hand)",
		"schema: index payouts_by_payee_digits is missing (dropped by hand)", "schema: table notes is not made by the migrations (added by hand)",
		"schema: table notes is not covered by the trail"} {
		if !findingAt(rep, 0, want) {
			t.Errorf("findings %v\nwant %q", rep.Findings, want)
		}
	}
	if len(rep.Findings) != 4 {
		t.Errorf("%d findings, want 4: %v", len(rep.Findings), rep.Findings)
	}
}
