package main_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/callbacks"
	"github.com/payout/payout/ledger"
)

// notCovered are the tables whose rows no money or display depends on; every other table of
// the ledger is edited below, column by column.
var notCovered = map[string]string{
	// SQLite's counter of the next AUTOINCREMENT id: an edit changes only the id a later row
	// gets, and the chain numbers its events itself.
	"sqlite_sequence": "SQLite's own",
	// The web console's open sessions: a row signs a browser in only as a person whose passkey
	// line the allowed signers hold, and what they do is an event of the chain.
	"console_sessions": "the console's sessions, by a digest of their tokens",
}

// closedTables hold what an older version recorded before approvals were signatures: a trigger
// refuses new rows, so a ledger made now has none to edit. Their rows in an upgraded ledger are
// sealed by the upgrade and covered like any other (TestUpgradeBringsAnOlderLedgerIntoTheTrail);
// here they must be empty, and a row inserted by hand is named.
var closedTables = []string{"approvals", "approved_runs"}

// trailLedger fills a ledger as users do: a run with a rejected row and a row the service
// refused, its retry file corrected and run, callbacks received (one delivered twice, one for an
// invoice not in the ledger), and an approval. It returns the user and the ledger's path.
func trailLedger(t *testing.T) (*user, string) {
	t.Helper()
	u := newUser(t, newSandbox(t))
	path := filepath.Join(u.dir, "payout-ledger.db")
	fillTrail(t, u, path)
	rawDB(t, path, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return u, path
}

// fillTrail fills u's ledger, at where (its file, or its PAYOUT_LEDGER URL), as trailLedger says.
func fillTrail(t *testing.T, u *user, where string) {
	t.Helper()
	const hashKey = "e2e-hash-key"
	input := filepath.Join(u.dir, "payroll.csv")
	data := "external_invoice_ref,amount,recipient_reference,bank,third_party_account_no,notes\n" +
		"TR-1,100.00,Aisyah Binti Ali,Maybank,0123456781,\n" +
		"TR-2,12.345,Bala,Maybank,0123456782,typo\n" +
		"TR-3,2000000.00,Chong,Maybank,0123456783,too much\n" +
		"TR-4,55.10,Devi,Maybank,0123456784,\n"
	if err := os.WriteFile(input, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := u.run("run", "--allow-partial", "--json", input)
	var summary struct {
		RunID     string `json:"run_id"`
		RetryFile string `json:"retry_file"`
	}
	if err := json.Unmarshal([]byte(out), &summary); code != 4 || err != nil {
		t.Fatalf("run exit %d, want 4: %v %s %s", code, err, out, errOut)
	}
	retry := summary.RetryFile
	if !filepath.IsAbs(retry) {
		retry = filepath.Join(u.dir, retry)
	}
	f, err := os.Open(retry)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(recs) != 3 {
		t.Fatalf("retry file: %q %v", recs, err)
	}
	// The typo corrected; the refused payout paid with another amount, so under a new reference
	// (a retry reference pays exactly what was refused).
	recs[1][1], recs[2][1] = "12.34", "2000.00"
	recs[2][0] = strings.TrimSuffix(recs[2][0], "-R1") + "-FIX"
	var b strings.Builder
	if err := csv.NewWriter(&b).WriteAll(recs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(retry, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := u.run("run", "--json", retry); code != 0 {
		t.Fatalf("retry run: exit %d: %s %s", code, out, errOut)
	}

	ctx := context.Background()
	db, err := ledger.Open(ctx, where, ledger.Options{Actor: "service callback"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h, err := callbacks.NewHandler(callbacks.Config{Ledger: db, HashKey: []byte(hashKey), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	p, err := db.Get(ctx, "TR-1")
	if err != nil {
		t.Fatal(err)
	}
	post := func(invoice string, amount decimal.Decimal, name string) {
		body, err := api.SignCallback(api.CallbackPayload{InvoiceNo: invoice, InvoiceStatusID: 2, InvoiceStatus: "SUCCESS",
			Amount: amount, BankReferenceNo: "BR-" + invoice, BankResponseSuccess: true, DisplayName: name,
			OrgnThirdPartyAccountNo: "0123456781"}, []byte(hashKey))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // delivered twice: stored once, counted
			resp, err := http.Post(srv.URL+callbacks.Path, "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("callback for %s answered %d", invoice, resp.StatusCode)
			}
		}
	}
	post(p.InvoiceNo, p.Amount, "AISYAH BINTI ALI")
	post("INV-NOT-OURS", decimal.RequireFromString("9.99"), "SOMEONE")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// The policy, and a file paid on a signature: events about the ledger itself.
	k := newSigners(t, u)
	if out, errOut, code := u.run("policy", "--approvals", "1"); code != 0 {
		t.Fatalf("policy: exit %d: %s %s", code, out, errOut)
	}
	signed := filepath.Join(u.dir, "signed.csv")
	if err := os.WriteFile(signed, []byte("external_invoice_ref,amount,recipient_reference,bank,third_party_account_no\n"+
		"TR-5,77.00,Eng,Maybank,0123456785\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	u.signPlan(t, k.alice, "signed.csv", signed+".alice.sig")
	if out, errOut, code := u.run("run", signed); code != 0 {
		t.Fatalf("signed run: exit %d: %s %s", code, out, errOut)
	}
	if out, errOut, code := u.run("audit", "verify"); code != 0 {
		t.Fatalf("audit verify of the untouched ledger: exit %d: %s %s", code, out, errOut)
	}
}

// rawDB runs statements on a ledger file by hand, as with the sqlite3 shell.
func rawDB(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// handEdit is one edit of the ledger by hand: set column to value in the row of table keyed by
// key (primary key columns and their values), its table's triggers dropped for the edit and made
// again, as someone with a shell would.
type handEdit struct {
	table, column string
	pk            []string
	key           []any
}

// schemaOf lists every table of the ledger and its columns (PRAGMA table_info, which leaves out
// generated columns: they are computed from the others), and each table's primary key.
func schemaOf(t *testing.T, db *sql.DB) (tables []string, cols, pks map[string][]string) {
	t.Helper()
	cols, pks = map[string][]string{}, map[string][]string{}
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	for _, tb := range tables {
		rows, err := db.Query(`SELECT name, pk FROM pragma_table_info(?) ORDER BY cid`, tb)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var n string
			var pk int
			if err := rows.Scan(&n, &pk); err != nil {
				t.Fatal(err)
			}
			cols[tb] = append(cols[tb], n)
			if pk > 0 {
				pks[tb] = append(pks[tb], n)
			}
		}
		rows.Close()
	}
	return tables, cols, pks
}

// pickRow chooses the row of table whose column holds something (not empty, not zero) if one
// does, and returns its key values.
func pickRow(t *testing.T, db *sql.DB, table, column string, pk []string) []any {
	t.Helper()
	quoted := make([]string, len(pk))
	for i, c := range pk {
		quoted[i] = `"` + c + `"`
	}
	q := fmt.Sprintf(`SELECT %s FROM "%s" ORDER BY ("%s" IS NULL OR "%s" = '' OR "%s" = 0), %s LIMIT 1`,
		strings.Join(quoted, ", "), table, column, column, column, strings.Join(quoted, ", "))
	key := make([]any, len(pk))
	ptrs := make([]any, len(pk))
	for i := range key {
		ptrs[i] = &key[i]
	}
	if err := db.QueryRow(q).Scan(ptrs...); err != nil {
		t.Fatalf("%s: no row to edit (%v): the ledger filled for this test must have one", table, err)
	}
	return key
}

// apply makes the edit on the ledger file at path: an integer moved by a large step, a text
// changed at its end, or (where a CHECK allows only some words) another allowed word.
func (e handEdit) apply(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	type trigger struct{ name, sql string }
	var triggers []trigger
	rows, err := db.Query(`SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?`, e.table)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var tr trigger
		if err := rows.Scan(&tr.name, &tr.sql); err != nil {
			t.Fatal(err)
		}
		triggers = append(triggers, tr)
	}
	rows.Close()
	for _, tr := range triggers {
		mustExec(t, db, `DROP TRIGGER "`+tr.name+`"`)
	}
	where := make([]string, len(e.pk))
	for i, c := range e.pk {
		where[i] = `"` + c + `" = ?`
	}
	set := fmt.Sprintf(`CASE typeof("%[1]s") WHEN 'integer' THEN "%[1]s" + 1000003 ELSE "%[1]s" || '9' END`, e.column)
	update := func(set string) (int64, error) {
		res, err := db.Exec(fmt.Sprintf(`UPDATE "%s" SET "%s" = %s WHERE %s`, e.table, e.column, set, strings.Join(where, " AND ")), e.key...)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}
	n, err := update(set)
	if err != nil && strings.Contains(err.Error(), "CHECK") {
		n, err = update(fmt.Sprintf(`CASE "%[1]s" WHEN 'rejected' THEN 'approved' ELSE 'rejected' END`, e.column))
	}
	if err != nil || n != 1 {
		t.Fatalf("edit %s.%s: %d rows, %v", e.table, e.column, n, err)
	}
	for _, tr := range triggers {
		mustExec(t, db, tr.sql)
	}
}

func mustExec(t *testing.T, db *sql.DB, s string) {
	t.Helper()
	if _, err := db.Exec(s); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
}

// named says whether audit verify's findings name the edit: its table (or the events' chain),
// its column, and its row's key. A change of a key column shows as a row gone and another come:
// the finding names the table and the old key. The events are hashed whole: the finding names
// the event, not the column.
func (e handEdit) named(out string) bool {
	keyText := func(v any) string {
		if b, ok := v.([]byte); ok {
			return string(b)
		}
		return fmt.Sprint(v)
	}
	isKey := false
	for _, c := range e.pk {
		isKey = isKey || c == e.column
	}
	for _, line := range strings.Split(out, "\n") {
		has := func(s string) bool { return strings.Contains(line, s) }
		allKeys := true
		for _, k := range e.key {
			allKeys = allKeys && has(keyText(k))
		}
		switch e.table {
		case "events":
			if has("event ") && allKeys {
				return true
			}
		case "row_events":
			if has("row event") && allKeys {
				return true
			}
		case "payouts", "payout_salts":
			if allKeys && (has(e.table) || e.table == "payouts" && has("payout ")) && (isKey || has(e.column)) {
				return true
			}
		default:
			if has(e.table) && allKeys && (isKey || has(e.column)) {
				return true
			}
		}
	}
	return false
}

// Every column of every table of a real ledger, edited by hand one at a time, is named by
// `payout audit verify` (exit 4). The tables and columns are read from the ledger itself: a
// table or a column added later is edited too, and fails here until the trail covers it.
func TestAuditVerifyNamesAHandEditOfEveryColumn(t *testing.T) {
	t.Parallel() // long, and mostly waiting on processes: beside the other long ones
	u, path := trailLedger(t)
	pristine, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tables, cols, pks := schemaOf(t, db)
	coverage := ledger.Coverage()
	edits := 0
	for _, table := range tables {
		if why, ok := notCovered[table]; ok {
			t.Logf("%s: not edited (%s)", table, why)
			continue
		}
		if _, ok := coverage[table]; !ok {
			t.Errorf("table %s is not covered by the trail (ledger.Coverage)", table)
			continue
		}
		if slices.Contains(closedTables, table) {
			var n int
			if err := db.QueryRow(`SELECT count(*) FROM "` + table + `"`).Scan(&n); err != nil || n != 0 {
				t.Errorf("%s: %d rows (%v), want none: it is closed", table, n, err)
			}
			continue
		}
		for _, column := range cols[table] {
			e := handEdit{table: table, column: column, pk: pks[table], key: pickRow(t, db, table, column, pks[table])}
			t.Run(table+"."+column, func(t *testing.T) {
				copyPath := filepath.Join(t.TempDir(), "edited.db")
				if err := os.WriteFile(copyPath, pristine, 0o600); err != nil {
					t.Fatal(err)
				}
				e.apply(t, copyPath)
				out, errOut, code := u.run("audit", "verify", "--ledger", copyPath)
				if code != 4 || !e.named(out) {
					t.Errorf("%s.%s of row %v edited by hand: exit %d, want 4 with a finding naming it:\n%s%s", table, column, e.key, code, out, errOut)
				}
			})
			edits++
		}
	}
	if edits < 80 {
		t.Errorf("only %d columns edited: the schema was not read", edits)
	}
}

// The two edits that moved money or what is shown: a payout's recording time moved back 30 days
// (its repeat would no longer be held), and the state totals times ten (`payout status` showed ten
// times the money). Both are named, and a trigger dropped by hand is too.
func TestAuditVerifyNamesTheEditsThatMovedMoney(t *testing.T) {
	t.Parallel()
	u, path := trailLedger(t)
	pristine, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		edit  []string
		wants []string
	}{
		{"created_at back 30 days", []string{`UPDATE payouts SET created_at = strftime('%Y-%m-%dT%H:%M:%S.000000000Z', created_at, '-30 days') WHERE ref = 'TR-4'`},
			[]string{"payout TR-4: created_at in the payouts table is"}},
		{"totals times ten", []string{`UPDATE state_totals SET sen = sen * 10`},
			[]string{"state_totals row of state SUCCEEDED: sen is"}},
		{"trigger dropped", []string{`DROP TRIGGER state_totals_update`},
			[]string{"schema: trigger state_totals_update is missing (dropped by hand)"}},
		{"an approval forged by hand", []string{`DROP TRIGGER approvals_closed`,
			`INSERT INTO approvals (file, file_sha256, plan_digest, row_count, total, new_payouts, new_total, providers,
				providers_digest, decision, reason, actor, maker, run_id, decided_at)
				VALUES ('payroll.csv', 'aa', 'bb', 1, '1.00', 1, '1.00', 1, 'cc', 'approved', '', 'bob@host', 'ana', '', '2026-11-20T00:00:00Z')`},
			[]string{"schema: trigger approvals_closed is missing (dropped by hand)", "no row event records it (inserted by hand)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(path, pristine, 0o600); err != nil {
				t.Fatal(err)
			}
			before, _, _ := u.run("status")
			rawDB(t, path, tc.edit...)
			if tc.name == "totals times ten" {
				if after, _, _ := u.run("status"); after == before {
					t.Errorf("status did not change with the totals: the edit proves nothing\n%s", after)
				}
			}
			out, errOut, code := u.run("audit", "verify")
			for _, w := range tc.wants {
				if code != 4 || !strings.Contains(out, w) {
					t.Errorf("exit %d, want 4 naming %q:\n%s%s", code, w, out, errOut)
				}
			}
		})
	}
}
