package ledger_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payout/payout/ledger"
)

// settle moves the seeded payouts: the first to SUCCEEDED through a callback with a payload,
// the second to FAILED, the third to SUBMITTED (still pending).
func settle(t *testing.T, db *ledger.DB, ps []ledger.Payout) {
	t.Helper()
	ctx := context.Background()
	for i, p := range ps[:3] {
		must(t, db.Apply(ctx, ledger.Change{Ref: p.Ref, From: ledger.Ready, To: ledger.Submitting, RunID: "r1", CountAttempt: true, Detail: "sending"}))
		must(t, db.Apply(ctx, ledger.Change{Ref: p.Ref, From: ledger.Submitting, To: ledger.Submitted, RunID: "r1",
			InvoiceNo: fmt.Sprintf("INV-%d", i), TransactionStatus: "PENDING", Detail: "accepted"}))
	}
	must(t, db.Apply(ctx, ledger.Change{Ref: ps[0].Ref, From: ledger.Submitted, To: ledger.Succeeded, BankReferenceNo: "BR-0",
		Detail: "callback: SUCCESS", Payload: `{"invoice_no":"INV-0","orgn_third_party_account_no":"0123456789","display_name":"Ali"}`}))
	must(t, db.Apply(ctx, ledger.Change{Ref: ps[1].Ref, From: ledger.Submitted, To: ledger.Failed, TransactionStatus: "FAILED", Detail: "failed"}))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func verify(t *testing.T, db *ledger.DB) ledger.ChainReport {
	t.Helper()
	rep, err := db.VerifyChain(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func wantIntact(t *testing.T, rep ledger.ChainReport) {
	t.Helper()
	for _, f := range rep.Findings {
		t.Errorf("finding: %s", f)
	}
}

// handEdit closes db and runs statements on the file through a connection of its own, as
// someone with the sqlite3 shell would: dropping a trigger first where the edit needs it.
func handEdit(t *testing.T, db *ledger.DB, path string, stmts ...string) *ledger.DB {
	t.Helper()
	must(t, db.Close())
	raw, err := sql.Open("sqlite", path)
	must(t, err)
	defer raw.Close()
	for _, s := range stmts {
		if _, err := raw.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return openAt(t, path)
}

func TestChainOfARunVerifies(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t)
	ps := seed(t, db, "r1", 4)
	settle(t, db, ps)
	rep := verify(t, db)
	wantIntact(t, rep)
	if rep.Events != 1+4+3*2+2 || rep.Payouts != 4 || rep.RowEvents == 0 {
		t.Errorf("verified %d events, %d row events, %d payouts; want 13, some, 4", rep.Events, rep.RowEvents, rep.Payouts)
	}
	head, err := db.ChainHead(context.Background())
	must(t, err)
	if head != rep.Head || head.ID != int64(rep.Events+rep.RowEvents) || len(head.Hash) != 64 {
		t.Errorf("head %v, verify's head %v", head, rep.Head)
	}
}

func TestEventsCarryActorAndVersion(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ledger.db")
	db, err := ledger.Create(context.Background(), path, ledger.Options{Actor: "ana@host1", Version: "v9.9.9"})
	must(t, err)
	defer db.Close()
	ps := seed(t, db, "r1", 1)
	must(t, db.Apply(context.Background(), ledger.Change{Ref: ps[0].Ref, From: ledger.Ready, To: ledger.Submitting}))
	var n int
	must(t, ledger.SQLOf(db).QueryRow(`SELECT count(*) FROM events WHERE actor = 'ana@host1' AND version = 'v9.9.9'`).Scan(&n))
	if n != 3 { // the policy's genesis, READY, SUBMITTING
		t.Errorf("%d of 3 events carry the actor and version", n)
	}
}

// findingAt returns the findings that name the event id (0: any) and mention want.
func findingAt(rep ledger.ChainReport, id int64, want string) bool {
	for _, f := range rep.Findings {
		if (id == 0 || f.EventID == id) && strings.Contains(f.String(), want) {
			return true
		}
	}
	return false
}

func TestVerifyNamesAnEventEditedByHand(t *testing.T) {
	t.Parallel()
	db, path := mustOpen(t)
	settle(t, db, seed(t, db, "r1", 4))
	id := lastEventOf(t, db, "r1-ref-1")
	db = handEdit(t, db, path, `DROP TRIGGER events_no_update`, fmt.Sprintf(`UPDATE events SET detail = 'nothing to see' WHERE id = %d`, id))
	rep := verify(t, db)
	if len(rep.Findings) != 2 || !findingAt(rep, id, "does not match its hash") || !findingAt(rep, 0, "schema: trigger events_no_update is missing") {
		t.Errorf("findings %v, want event %d named as edited and the dropped trigger", rep.Findings, id)
	}
}

func TestVerifyNamesAnEventDeletedByHand(t *testing.T) {
	t.Parallel()
	db, path := mustOpen(t)
	settle(t, db, seed(t, db, "r1", 4))
	id := mustEvents(t, db, "r1-ref-1")[1].ID
	db = handEdit(t, db, path, `DROP TRIGGER events_no_delete`, fmt.Sprintf(`DELETE FROM events WHERE id = %d`, id))
	rep := verify(t, db)
	if !findingAt(rep, id+1, fmt.Sprintf("events %d to %d are missing", id, id)) || !findingAt(rep, id+1, fmt.Sprintf("prev_hash is not the hash of event %d", id-1)) {
		t.Errorf("findings %v, want event %d naming event %d missing", rep.Findings, id+1, id)
	}
}

func TestVerifyNamesAnEventInsertedByHand(t *testing.T) {
	t.Parallel()
	db, path := mustOpen(t)
	ps := seed(t, db, "r1", 4)
	settle(t, db, ps)
	db = handEdit(t, db, path, fmt.Sprintf(`INSERT INTO events (ref, run_id, at, from_state, to_state, detail, payload, prev_hash, hash)
		SELECT '%s', 'r1', at, 'SUBMITTED', 'SUBMITTED', 'forged', '', hash, 'x' FROM events ORDER BY id DESC LIMIT 1`, ps[2].Ref))
	forged := lastEventOf(t, db, ps[2].Ref)
	// The forged event also moved the payout's update time, by the replay: its row disagrees.
	rep := verify(t, db)
	if len(rep.Findings) != 2 || !findingAt(rep, forged, "does not match its hash") || !findingAt(rep, 0, "updated_at in the payouts table") {
		t.Errorf("findings %v, want event %d named as inserted", rep.Findings, forged)
	}
	// The next event appended chains to the forged one, and verify keeps naming the forgery only.
	must(t, db.Apply(context.Background(), ledger.Change{Ref: ps[3].Ref, From: ledger.Ready, To: ledger.Submitting}))
	if rep = verify(t, db); len(rep.Findings) != 2 || !findingAt(rep, forged, "") {
		t.Errorf("after another event: findings %v, want only event %d", rep.Findings, forged)
	}
}

func TestVerifyNamesAPayoutRowEditedByHand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, set, want string }{
		{"amount", `amount = '9999.00'`, `amount in the payouts table is "9999.00", its events say "10.00"`},
		{"state", `state = 'READY'`, `state in the payouts table is "READY", its events say "SUCCEEDED"`},
		{"account", `account = '999999999'`, "recipient or account in the payouts table, or the payout's salt in payout_salts, does not match"},
		{"invoice", `invoice_no = 'INV-X'`, `invoice_no in the payouts table is "INV-X"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, path := mustOpen(t)
			ps := seed(t, db, "r1", 4)
			settle(t, db, ps)
			db = handEdit(t, db, path, fmt.Sprintf(`UPDATE payouts SET %s WHERE ref = '%s'`, tc.set, ps[0].Ref))
			rep := verify(t, db)
			if len(rep.Findings) != 1 || !strings.Contains(rep.Findings[0].String(), "payout "+ps[0].Ref+": "+tc.want) {
				t.Errorf("findings %v, want one: %s", rep.Findings, tc.want)
			}
		})
	}
}

func TestVerifyNamesAPayloadEditedByHand(t *testing.T) {
	t.Parallel()
	db, path := mustOpen(t)
	settle(t, db, seed(t, db, "r1", 4))
	// Purge may replace a payload, so the trigger lets that through; the digest does not.
	db = handEdit(t, db, path, `UPDATE events SET payload = '{"invoice_no":"INV-0","amount":"1"}' WHERE id = 11`)
	if rep := verify(t, db); len(rep.Findings) != 1 || !findingAt(rep, 11, "payload does not match its digest") {
		t.Errorf("findings %v, want event 11's payload", rep.Findings)
	}
}

func maskName(s string) string { return s[:1] + "***" }
func maskAccount(s string) string {
	return "****" + s[len(s)-4:]
}

func TestPurgeMasksFinalPayoutsAndKeepsTheChain(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t)
	ctx := context.Background()
	ps := seed(t, db, "r1", 4)
	settle(t, db, ps)
	must(t, db.StoreCallback(ctx, ledger.StoredCallback{InvoiceNo: "INV-0", Verdict: "applied", Payload: `{"orgn_third_party_account_no":"0123456789"}`}))
	before, err := db.Counts(ctx, ledger.CountRead{RejectedRows: true})
	must(t, err)
	res, err := db.Purge(ctx, ledger.PurgeRequest{Before: time.Now().Add(time.Hour * 24 * 365 * 10), MaskName: maskName, MaskAccount: maskAccount, Detail: "purged"})
	must(t, err)
	if strings.Join(res.Purged, ",") != ps[0].Ref+","+ps[1].Ref || len(res.Left) != 2 || res.Callbacks != 1 {
		t.Errorf("purged %v, left %d, callbacks %d; want the two final ones, two left, one callback", res.Purged, len(res.Left), res.Callbacks)
	}
	p := mustGet(t, db, ps[0].Ref)
	if p.Recipient != "A***" || p.Account != "****6789" || p.State != ledger.Succeeded || p.InvoiceNo != "INV-0" {
		t.Errorf("purged payout %+v", p)
	}
	if q := mustGet(t, db, ps[2].Ref); q.Account != "0123456789" {
		t.Errorf("a pending payout was masked: %+v", q)
	}
	after, err := db.Counts(ctx, ledger.CountRead{RejectedRows: true})
	must(t, err)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("totals changed: %v, then %v", before, after)
	}
	wantIntact(t, verify(t, db))
	var leaks int
	must(t, ledger.SQLOf(db).QueryRow(`SELECT (SELECT count(*) FROM events WHERE payload LIKE '%0123456789%')
		+ (SELECT count(*) FROM callbacks WHERE payload LIKE '%0123456789%')
		+ (SELECT count(*) FROM run_rows WHERE ref IN (?, ?) AND account = '0123456789')
		+ (SELECT count(*) FROM payout_salts WHERE ref IN (?, ?))`, ps[0].Ref, ps[1].Ref, ps[0].Ref, ps[1].Ref).Scan(&leaks))
	if leaks != 0 {
		t.Errorf("%d places still hold the account number or the salt of a purged payout", leaks)
	}
	evs := mustEvents(t, db, ps[0].Ref)
	if last := evs[len(evs)-1]; last.Detail != "purged" || last.To != ledger.Succeeded {
		t.Errorf("last event %+v, want the purge's", last)
	}
	// A second purge has nothing left to do.
	res, err = db.Purge(ctx, ledger.PurgeRequest{Before: time.Now().Add(time.Hour * 24 * 365 * 10), MaskName: maskName, MaskAccount: maskAccount, Detail: "purged"})
	must(t, err)
	if len(res.Purged) != 0 {
		t.Errorf("purged again: %v", res.Purged)
	}
}

// A callback that comes after its payout was purged keeps no personal data either.
func TestCallbackAfterPurgeKeepsNoPersonalData(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t)
	ctx := context.Background()
	ps := seed(t, db, "r1", 4)
	settle(t, db, ps)
	purge := ledger.PurgeRequest{Before: time.Now().AddDate(10, 0, 0), MaskName: maskName, MaskAccount: maskAccount, Detail: "purged"}
	_, err := db.Purge(ctx, purge)
	must(t, err)
	late := `{"invoice_no":"INV-0","orgn_third_party_account_no":"0123456789"}`
	must(t, db.Apply(ctx, ledger.Change{Ref: ps[0].Ref, From: ledger.Succeeded, To: ledger.Succeeded, Detail: "callback: replay", Payload: late}))
	must(t, db.StoreCallback(ctx, ledger.StoredCallback{InvoiceNo: "INV-0", Verdict: "replay", Payload: late}))
	evs := mustEvents(t, db, ps[0].Ref)
	if got := evs[len(evs)-1].Payload; got != ledger.PurgedPayload {
		t.Errorf("payload of a callback after purge: %q", got)
	}
	wantIntact(t, verify(t, db))
	res, err := db.Purge(ctx, purge)
	must(t, err)
	if res.Callbacks != 1 || len(res.Purged) != 0 {
		t.Errorf("second purge: %+v, want the late callback masked and no payout purged again", res)
	}
}

func TestVerifyNamesAPurgedPayoutEditedByHand(t *testing.T) {
	t.Parallel()
	db, path := mustOpen(t)
	ps := seed(t, db, "r1", 4)
	settle(t, db, ps)
	_, err := db.Purge(context.Background(), ledger.PurgeRequest{Before: time.Now().AddDate(10, 0, 0), MaskName: maskName, MaskAccount: maskAccount, Detail: "purged"})
	must(t, err)
	db = handEdit(t, db, path, fmt.Sprintf(`UPDATE payouts SET account = '5550001111' WHERE ref = '%s'`, ps[0].Ref))
	if rep := verify(t, db); len(rep.Findings) != 1 || !findingAt(rep, 0, `account in the payouts table is "5550001111", its events say "****6789"`) {
		t.Errorf("findings %v", rep.Findings)
	}
}

// Two processes append: each reads the head inside its own write transaction.
func TestChainHoldsWithTwoWritersOnOneFile(t *testing.T) {
	t.Parallel()
	db, path := mustOpen(t)
	ps := seed(t, db, "r1", 40)
	other := openAt(t, path)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i, p := range ps {
		w := db
		if i%2 == 1 {
			w = other
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.Apply(ctx, ledger.Change{Ref: p.Ref, From: ledger.Ready, To: ledger.Submitting}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	wantIntact(t, verify(t, db))
}

// A call refused inside a group commit leaves no trace in the chain of the calls committed with it.
func TestChainHoldsWhenACallOfABatchIsRefused(t *testing.T) {
	t.Parallel()
	db, _ := mustOpen(t)
	ps := seed(t, db, "r1", 60)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := 0; i+1 < len(ps); i += 2 {
		wg.Add(2)
		go func() { // the second change is refused: the call keeps neither
			defer wg.Done()
			_ = db.Apply(ctx, ledger.Change{Ref: ps[i].Ref, From: ledger.Ready, To: ledger.Submitting},
				ledger.Change{Ref: ps[i+1].Ref, From: ledger.Submitted, To: ledger.Succeeded})
		}()
		go func() {
			defer wg.Done()
			if err := db.Apply(ctx, ledger.Change{Ref: ps[i+1].Ref, From: ledger.Ready, To: ledger.Submitting}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	wantIntact(t, verify(t, db))
}

// An older ledger's events are sealed into the chain when it is migrated.
func TestMigrationSealsTheEventsOfAnOlderLedger(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "old.db")
	schema, err := os.ReadFile(filepath.Join("migrations", "0001_init.sql"))
	must(t, err)
	raw, err := sql.Open("sqlite", path)
	must(t, err)
	for _, s := range []string{string(schema), `PRAGMA user_version = 1`,
		`INSERT INTO runs (id, kind, started_at, status) VALUES ('r0', 'run', '2026-01-01T00:00:00.000000000Z', 'finished')`,
		`INSERT INTO payouts (ref, run_id, line, recipient, provider_id, bank, account, amount, description, state, invoice_no, created_at, updated_at)
			VALUES ('old-1', 'r0', 2, 'Siti', 7, 'Maybank', '5551234', '12.50', 'salary', 'SUCCEEDED', 'INV-9', '2026-01-01T00:00:00.000000000Z', '2026-01-01T00:00:00.000000000Z')`,
		`INSERT INTO events (ref, run_id, at, from_state, to_state, detail, payload) VALUES
			('old-1', 'r0', '2026-01-01T00:00:00.000000000Z', '', 'READY', 'recorded', ''),
			('old-1', 'r0', '2026-01-01T00:00:01.000000000Z', 'READY', 'SUCCEEDED', 'paid', '{"account":"5551234"}')`,
	} {
		if _, err := raw.Exec(s); err != nil {
			t.Fatalf("%.60s: %v", s, err)
		}
	}
	must(t, raw.Close())
	db := openAt(t, path)
	rep := verify(t, db)
	wantIntact(t, rep)
	// The payout's update time was not its last event's: the upgrade attests it, in a third
	// event; the policy's genesis at the upgrade is the fourth.
	if rep.Events != 4 || rep.RowEvents != 1 || rep.Head.ID != 5 {
		t.Errorf("verified %d events, head %v", rep.Events, rep.Head)
	}
	db = handEdit(t, db, path, `UPDATE payouts SET amount = '125.00'`)
	if rep := verify(t, db); !findingAt(rep, 0, `amount in the payouts table is "125.00"`) {
		t.Errorf("findings %v", rep.Findings)
	}
}

// The ledger holds names and account numbers: its file and SQLite's files beside it are its
// owner's only, whatever the umask, while it is open and written.
func TestLedgerFilesAreReadableByTheirOwnerOnly(t *testing.T) {
	t.Parallel()
	db, path := mustOpen(t)
	seed(t, db, "r1", 3)
	lock, err := ledger.Lock(path)
	must(t, err)
	defer lock.Close()
	for _, name := range []string{path, path + "-wal", path + "-shm", path + ".lock"} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %04o, want 0600", filepath.Base(name), fi.Mode().Perm())
		}
	}
}

func TestVerifyNamesPayoutRowsDeletedOrInsertedByHand(t *testing.T) {
	t.Parallel()
	db, path := mustOpen(t)
	ps := seed(t, db, "r1", 4)
	settle(t, db, ps)
	db = handEdit(t, db, path, `PRAGMA foreign_keys = OFF`,
		fmt.Sprintf(`DELETE FROM payouts WHERE ref = '%s'`, ps[3].Ref),
		fmt.Sprintf(`INSERT INTO payouts (ref, run_id, line, recipient, provider_id, bank, account, amount, description, state,
			invoice_no, transaction_status, bank_reference_no, attempts, not_found_count, first_not_found_at, last_error, created_at, updated_at)
			SELECT 'zz-forged', run_id, line, recipient, provider_id, bank, account, amount, description, state,
			invoice_no, transaction_status, bank_reference_no, attempts, not_found_count, first_not_found_at, last_error, created_at, updated_at
			FROM payouts WHERE ref = '%s'`, ps[0].Ref))
	rep := verify(t, db)
	if len(rep.Findings) != 2 || !findingAt(rep, 0, "payout "+ps[3].Ref+": it has events but no row in the payouts table") ||
		!findingAt(rep, 0, "payout zz-forged: it has no events") {
		t.Errorf("findings %v", rep.Findings)
	}
}

// lastEventOf is the id of the last event of a payout.
func lastEventOf(t *testing.T, db *ledger.DB, ref string) int64 {
	t.Helper()
	evs := mustEvents(t, db, ref)
	return evs[len(evs)-1].ID
}
