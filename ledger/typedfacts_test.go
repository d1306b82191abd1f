package ledger_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

// A ledger whose refusal confirmations and paid-elsewhere lines were told by text is upgraded to
// the typed columns, set from that text: the payouts and lines read as before, the ledger
// verifies intact, and a hand edit of either column afterwards is named.
func TestUpgradeTurnsTheTextOfConfirmationsIntoColumns(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "old.db")
	schema, err := os.ReadFile(filepath.Join("migrations", "0001_init.sql"))
	must(t, err)
	raw, err := sql.Open("sqlite", path)
	must(t, err)
	const t0, t1 = "2026-01-01T00:00:00.000000000Z", "2026-01-01T00:00:01.000000000Z"
	const confirmed = "fail; refusal confirmed: a lookup by external_invoice_ref found no payout"
	for _, s := range []string{string(schema), `PRAGMA user_version = 1`,
		`INSERT INTO runs (id, kind, file, started_at, ended_at, status, exit_code) VALUES ('r0', 'run', 'dec.csv', '` + t0 + `', '` + t1 + `', 'finished', 4)`,
		`INSERT INTO run_rows VALUES ('r0', 2, 'paid-1', 'Siti', 7, 'Maybank', '5551234', '12.50', 'salary', 0, 'already paid by nov.csv in run r9 on 2025-11-30; not sent again', 1),
			('r0', 4, 'other-1', 'Ali', 7, 'Maybank', '5551235', '1.00', 'salary', 0, 'already accepted', 1)`,
		`INSERT INTO payouts (ref, run_id, line, recipient, provider_id, bank, account, amount, description, state, invoice_no,
			attempts, not_found_count, first_not_found_at, last_error, created_at, updated_at) VALUES
			('refused-1', 'r0', 3, 'Bala', 7, 'Maybank', '5551236', '3.00', 'salary', 'FAILED', '', 1, 0, '', '` + confirmed + `', '` + t0 + `', '` + t1 + `'),
			('refused-2', 'r0', 5, 'Chan', 7, 'Maybank', '5551237', '4.00', 'salary', 'FAILED', '', 1, 0, '', 'fail', '` + t0 + `', '` + t1 + `')`,
		`INSERT INTO events (ref, run_id, at, from_state, to_state, detail, payload) VALUES
			('refused-1', 'r0', '` + t0 + `', '', 'READY', 'recorded', ''),
			('refused-1', 'r0', '` + t1 + `', 'READY', 'FAILED', 'refused', ''),
			('refused-2', 'r0', '` + t0 + `', '', 'READY', 'recorded', ''),
			('refused-2', 'r0', '` + t1 + `', 'READY', 'FAILED', 'refused', '')`,
	} {
		if _, err := raw.Exec(s); err != nil {
			t.Fatalf("%.60s: %v", s, err)
		}
	}
	must(t, raw.Close())
	db := openAt(t, path)
	ctx := context.Background()
	if p := mustGet(t, db, "refused-1"); !p.RefusalConfirmed {
		t.Errorf("refused-1 (last error %q) is not RefusalConfirmed after the upgrade", p.LastError)
	}
	if p := mustGet(t, db, "refused-2"); p.RefusalConfirmed {
		t.Errorf("refused-2, whose refusal no lookup confirmed, is RefusalConfirmed after the upgrade")
	}
	rows, err := db.RunRows(ctx, "r0")
	must(t, err)
	paid := map[string]bool{}
	for _, r := range rows {
		paid[r.Ref] = r.PaidElsewhere
	}
	if !paid["paid-1"] || paid["other-1"] {
		t.Errorf("paid elsewhere after the upgrade: %v, want paid-1 only", paid)
	}
	wantIntact(t, verify(t, db))
	db = handEdit(t, db, path, `UPDATE payouts SET refusal_confirmed = 1 - refusal_confirmed`,
		`UPDATE run_rows SET paid_elsewhere = 1 - paid_elsewhere WHERE line = 2`)
	rep := verify(t, db)
	for _, want := range []string{`payout refused-1: refusal_confirmed in the payouts table is "0", its events say "1"`,
		`payout refused-2: refusal_confirmed in the payouts table is "1", its events say "0"`,
		`run_rows row r0/000000002: column paid_elsewhere is 0, row event`} {
		if !findingAt(rep, 0, want) {
			t.Errorf("findings %v\nwant one naming %s", rep.Findings, want)
		}
	}
}
