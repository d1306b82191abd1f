package main_test

import (
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch/signature/signaturetest"
	"github.com/payout/payout/internal/pgtest"
	"github.com/payout/payout/ledger"
)

// The attacks of an insider who can write the ledger's tables but holds neither the merchant
// token nor a signer's key: each pays nothing, and the run or audit verify names what was done.

// eventTime is how the ledger writes an event's time.
func eventTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000Z") }

// appendChained appends e to the chain of the ledger behind db as a writer of its tables can:
// numbered after the head, linked to it, its hash computed. It returns e's id.
func appendChained(t *testing.T, db *sql.DB, e ledger.ChainEvent) int64 {
	t.Helper()
	var head ledger.ChainEvent
	if err := db.QueryRow(`SELECT id, hash FROM (SELECT id, hash FROM events UNION ALL SELECT id, hash FROM row_events) AS c
		ORDER BY id DESC LIMIT 1`).Scan(&head.ID, &head.Hash); err != nil {
		t.Fatal(err)
	}
	e.ID, e.PrevHash = head.ID+1, head.Hash
	if e.At == "" {
		e.At = eventTime(time.Now())
	}
	e.Actor, e.Version = "dba@db", "v"
	e.Hash = ledger.HashEvent(e)
	if _, err := db.Exec(`INSERT INTO events (id, ref, run_id, at, from_state, to_state, detail, payload, actor, version, facts, personal, prev_hash, hash)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`, e.ID, e.Ref, e.RunID, e.At, e.From, e.To, e.Detail,
		e.Payload, e.Actor, e.Version, e.Facts, e.Personal, e.PrevHash, e.Hash); err != nil {
		t.Fatal(err)
	}
	return e.ID
}

// insiderLedger is a user with a ledger made by payout init on engine ("sqlite" or "postgres"),
// and a connection to its tables as an insider has one: a role that can write them, and no
// merchant token.
func insiderLedger(t *testing.T, engine string, sb *sandbox.Server) (*user, *sql.DB) {
	t.Helper()
	if engine == "postgres" {
		u := newUserWithoutLedger(t, sb)
		where := pgtest.New(t)
		u.env = append(u.env, "PAYOUT_LEDGER="+where)
		if out, errOut, code := u.run("init"); code != 0 {
			t.Fatalf("init: exit %d: %s %s", code, out, errOut)
		}
		db := pgOpen(t, where)
		t.Cleanup(func() { db.Close() })
		return u, db
	}
	u := newUser(t, sb)
	return u, openSQLite(t, filepath.Join(u.dir, "payout-ledger.db"))
}

// bothEngines runs test on a SQLite ledger and on a PostgreSQL one.
func bothEngines(t *testing.T, test func(t *testing.T, engine string)) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel() // a ledger, a sandbox and folders of its own
			test(t, engine)
		})
	}
}

// factOf is one fact of the ledger event of kind, the first there is.
func factOf(t *testing.T, db *sql.DB, kind, key string) string {
	t.Helper()
	var facts string
	if err := db.QueryRow(`SELECT facts FROM events WHERE to_state = $1 ORDER BY id LIMIT 1`, kind).Scan(&facts); err != nil {
		t.Fatalf("%s event: %v", kind, err)
	}
	m := map[string]string{}
	if err := json.Unmarshal([]byte(facts), &m); err != nil {
		t.Fatal(err)
	}
	return m[key]
}

func openSQLite(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExecArgs(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// planRow is a row of a plan statement: what the file pays.
type planRow struct {
	line, provider                  int
	ref, account, amount, recipient string
}

// planRows are the rows `payout plan` prints for file.
func planRows(t *testing.T, u *user, file string) []planRow {
	t.Helper()
	out, errOut, code := u.run("plan", file)
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errOut)
	}
	var rows []planRow
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "\t")
		if f[0] != "row" {
			continue
		}
		ref, _ := strconv.Unquote(f[2])
		name, _ := strconv.Unquote(f[6])
		line, _ := strconv.Atoi(f[1])
		provider, _ := strconv.Atoi(f[3])
		rows = append(rows, planRow{line: line, ref: ref, provider: provider, account: f[4], amount: f[5], recipient: name})
	}
	return rows
}

// insertReady inserts r as a READY payout, as the insider would; with its "recorded" event
// chained when chained is set.
func insertReady(t *testing.T, db *sql.DB, r planRow, bank string, chained bool) {
	t.Helper()
	now := eventTime(time.Now())
	mustExecArgs(t, db, `INSERT INTO payouts (ref, run_id, line, recipient, provider_id, bank, account, amount, description, state, created_at, updated_at)
		VALUES ($1, 'by-hand', $2, $3, $4, $5, $6, $7, 'Bonus', 'READY', $8, $8)`, r.ref, r.line, r.recipient, r.provider, bank, r.account, r.amount, now)
	if chained {
		facts, _ := json.Marshal(map[string]string{"amount": r.amount, "bank": bank, "description": "Bonus", "line": strconv.Itoa(r.line),
			"provider_id": strconv.Itoa(r.provider), "run_id": "by-hand"})
		appendChained(t, db, ledger.ChainEvent{Ref: r.ref, RunID: "by-hand", At: now, To: "READY", Detail: "recorded", Facts: string(facts)})
	}
}

// (1) Payouts put into the ledger by hand, with chained events or without any, pay nothing
// without the signatures of their file: the run refuses at the door (exit 5), and a file that
// is signed still sends none of a row that has no event of its own (the till).
func TestInsiderRowsAddedByHandAreNotPaid(t *testing.T) {
	t.Parallel()
	bothEngines(t, insiderRowsAddedByHand)
}

func insiderRowsAddedByHand(t *testing.T, engine string) {
	sb := newSandbox(t)
	u, db := insiderLedger(t, engine, sb)
	k := newSigners(t, u)
	if _, errOut, code := u.run("policy", "--approvals", "1"); code != 0 {
		t.Fatalf("policy: exit %d: %s", code, errOut)
	}
	header := "external_invoice_ref,recipient_reference,bank,third_party_account_no,amount,payment_description\n"
	bonus := filepath.Join(u.dir, "bonus.csv")
	if err := os.WriteFile(bonus, []byte(header+"BONUS-1,Ahmad Faizal bin Ismail,Maybank,000181590832,4660.25,Bonus\n"+
		"BONUS-2,Nurul Aisyah binti Rahman,Maybank,131860913909,4660.25,Bonus\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	extra := filepath.Join(u.dir, "extra.csv")
	if err := os.WriteFile(extra, []byte(header+"EXTRA-777,Mallory,Maybank,123456789012,777.00,Bonus\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, r := range planRows(t, u, "bonus.csv") {
		insertReady(t, db, r, "Maybank", true)
	}
	insertReady(t, db, planRows(t, u, "extra.csv")[0], "Maybank", false)

	expectExit5(t, u, "needs 1 distinct signers; have 0", "run", "bonus.csv")
	expectExit5(t, u, "needs 1 distinct signers; have 0", "run", "extra.csv")
	// Signed, the file passes the door; its row without an event of its own is stopped at the till.
	u.signPlan(t, k.alice, "extra.csv", extra+".alice.sig")
	expectExit5(t, u, "payout EXTRA-777 was not sent", "run", "extra.csv")
	if n := sb.Stats().Creates; n != 0 {
		t.Fatalf("%d payouts sent for rows put into the ledger by hand", n)
	}
	if out, errOut, code := u.run("audit", "verify"); code != 4 || !strings.Contains(out, "EXTRA-777") {
		t.Fatalf("audit verify after a payout inserted without events: exit %d, want 4 naming it\n%s%s", code, out, errOut)
	}
}

// startRun starts `payout run` as u would, without waiting for it.
func (u *user) startRun(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"run"}, args...)...)
	cmd.Dir, cmd.Env = u.dir, u.env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// (2) A run stopped after recording its rows, then a signed refusal beside the file: the next
// run sends nothing, and once the refusal is recorded, deleting its files changes nothing.
func TestRefusalAfterRecordingStopsTheRerun(t *testing.T) {
	t.Parallel()
	bothEngines(t, refusalAfterRecording)
}

func refusalAfterRecording(t *testing.T, engine string) {
	sb := newSandbox(t)
	u, db := insiderLedger(t, engine, sb)
	k := newSigners(t, u)
	if _, errOut, code := u.run("policy", "--approvals", "1"); code != 0 {
		t.Fatalf("policy: exit %d: %s", code, errOut)
	}
	file := filepath.Join(u.dir, "payroll.csv")
	copyFile(t, samplePath(t), file)
	u.signPlan(t, k.alice, "payroll.csv", file+".alice.sig")
	rows := len(planRows(t, u, "payroll.csv"))

	// A run slowed to a payout an hour is stopped once it has recorded every row.
	run := u.startRun(t, "--rate", "0.0003", "payroll.csv")
	waitFor(t, time.Minute, "the run to record its rows", func() bool {
		var n int
		return db.QueryRow(`SELECT count(*) FROM payouts`).Scan(&n) == nil && n == rows
	})
	if err := run.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := run.Wait(); err == nil {
		t.Fatal("the stopped run exited 0")
	}
	sent := sb.Stats().Creates
	if sent >= rows {
		t.Fatalf("the stopped run sent %d of %d payouts", sent, rows)
	}
	if engine == "postgres" {
		// The processes of a PostgreSQL ledger share the merchant's pace, which the slow run
		// set to an hour a request: let that hour pass.
		mustExecArgs(t, db, `UPDATE rate_limits SET tat = '-infinity'`)
	}

	if out, errOut, code := u.run("reject", "--key", k.bob.Path, "--reason", "wrong month", "payroll.csv"); code != 0 {
		t.Fatalf("reject: exit %d: %s %s", code, out, errOut)
	}
	expectExit5(t, u, "REJECTED by bob,mallory: wrong month", "run", "payroll.csv")
	matches, _ := filepath.Glob(file + ".bob_mallory.*")
	for _, m := range matches {
		if err := os.Remove(m); err != nil {
			t.Fatal(err)
		}
	}
	expectExit5(t, u, "REJECTED by bob,mallory: wrong month", "run", "payroll.csv")
	if n := sb.Stats().Creates; n != sent {
		t.Fatalf("%d payouts sent after the refusal", n-sent)
	}
	statement, sig := factOf(t, db, ledger.EventRejected, "statement"), factOf(t, db, ledger.EventRejected, "signature")
	if !strings.HasPrefix(statement, "payout-reject v1\n") || !strings.Contains(sig, "BEGIN SSH SIGNATURE") {
		t.Fatalf("the recorded refusal keeps no statement and signature: %q %q", statement, sig)
	}
}

// (3) A paid payout set back to READY, by a chained event or by a plain UPDATE, is not paid
// again: the run stops before its intent (exit 5); audit verify names the move the state
// machine does not allow, and an event dated before the one ahead of it.
func TestPaidRowSetBackToReadyIsNotPaidAgain(t *testing.T) {
	t.Parallel()
	bothEngines(t, paidRowSetBackToReady)
}

func paidRowSetBackToReady(t *testing.T, engine string) {
	sb := newSandbox(t)
	u, db := insiderLedger(t, engine, sb)
	file := filepath.Join(u.dir, "payroll.csv")
	copyFile(t, samplePath(t), file)
	paidRun(t, u, file)
	sent := sb.Stats().Creates
	var state string
	if err := db.QueryRow(`SELECT state FROM payouts WHERE ref = 'PAY-2026-11-001'`).Scan(&state); err != nil {
		t.Fatal(err)
	}
	moved := appendChained(t, db, ledger.ChainEvent{Ref: "PAY-2026-11-001", From: state, To: "READY", Detail: "reset"})
	mustExec(t, db, `UPDATE payouts SET state = 'READY' WHERE ref = 'PAY-2026-11-001'`)
	mustExec(t, db, `UPDATE payouts SET state = 'READY' WHERE ref = 'PAY-2026-11-002'`)
	backdated := appendChained(t, db, ledger.ChainEvent{Ref: "PAY-2026-11-003", From: state, To: state, Detail: "a note",
		At: eventTime(time.Now().AddDate(0, -1, 0))})

	out, errOut, code := u.run("run", "payroll.csv")
	if code != 5 || !regexp.MustCompile(`payout PAY-2026-11-00[12] was not sent`).MatchString(out+errOut) {
		t.Fatalf("rerun after paid rows were set back to READY: exit %d, want 5 naming one\n%s%s", code, out, errOut)
	}
	if n := sb.Stats().Creates; n != sent {
		t.Fatalf("%d payouts sent again", n-sent)
	}
	out, errOut, code = u.run("audit", "verify")
	for _, want := range []string{
		"event " + strconv.FormatInt(moved, 10) + ": payout PAY-2026-11-001: it moves the payout from " + state + " to READY, which the state machine does not allow",
		"event " + strconv.FormatInt(backdated, 10) + ": payout PAY-2026-11-003: its time",
		"PAY-2026-11-002",
	} {
		if code != 4 || !strings.Contains(out, want) {
			t.Errorf("audit verify: exit %d, want 4 saying %q\n%s%s", code, want, out, errOut)
		}
	}
}

// (5) Approval events appended by hand, naming signers but storing no signature, prove nothing:
// the reports written again name no approver, audit verify names the events, and the pack
// carries no approval of them.
func TestForgedApprovalEventsProveNothing(t *testing.T) {
	t.Parallel()
	bothEngines(t, forgedApprovalEvents)
}

func forgedApprovalEvents(t *testing.T, engine string) {
	u, db := insiderLedger(t, engine, newSandbox(t))
	newSigners(t, u)
	file := filepath.Join(u.dir, "payroll.csv")
	copyFile(t, samplePath(t), file)
	runID, _ := paidRun(t, u, file)
	var forged []int64
	for _, who := range []string{"bob", "carol"} {
		facts, _ := json.Marshal(map[string]string{"principal": who, "fingerprint": "SHA256:x", "plan_sha256": strings.Repeat("0", 64),
			"sig_sha256": strings.Repeat("0", 64), "valid_until": time.Now().UTC().Format(time.DateOnly)})
		forged = append(forged, appendChained(t, db, ledger.ChainEvent{RunID: runID, To: ledger.EventApproved,
			Detail: "plan signed by " + who, Facts: string(facts)}))
	}
	again := filepath.Join(u.dir, "again")
	if out, errOut, code := u.run("report", "--report-dir", again, runID); code != 0 {
		t.Fatalf("report: exit %d: %s %s", code, out, errOut)
	}
	html, _ := filepath.Glob(filepath.Join(again, "*.report.html"))
	data, _ := os.ReadFile(html[0])
	if strings.Contains(string(data), "carol") {
		t.Error("the report written again names an approver whose event stores no signature")
	}
	out, errOut, code := u.run("audit", "verify")
	for _, id := range forged {
		if want := "event " + strconv.FormatInt(id, 10) + ": an approval of run " + runID; code != 4 || !strings.Contains(out, want) ||
			!strings.Contains(out, "stores no signature") {
			t.Errorf("audit verify: exit %d, want 4 saying %q\n%s%s", code, want, out, errOut)
		}
	}
	pack := filepath.Join(u.dir, "run.zip")
	if out, errOut, code := u.run("audit", "export", "--run", runID, "--out", pack); code != 0 {
		t.Fatalf("export: exit %d: %s %s", code, out, errOut)
	}
	if out, errOut, code := u.run("audit", "verify", "--pack", pack); code != 4 || !strings.Contains(out, "it proves no approval") {
		t.Errorf("audit verify --pack of a run with forged approvals: exit %d, want 4\n%s%s", code, out, errOut)
	}
}

// A signature made by payout approve and one made by ssh-keygen -Y sign are both stored whole
// in the chain, and the pack carries them with their statement and allowed_signers lines, which
// ssh-keygen -Y verify accepts; approvals.jsonl names both signers.
func TestPackSignaturesPassSSHKeygenVerify(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	u := newUser(t, newSandbox(t))
	k := newSigners(t, u)
	if _, errOut, code := u.run("policy", "--approvals", "2"); code != 0 {
		t.Fatalf("policy: exit %d: %s", code, errOut)
	}
	file := filepath.Join(u.dir, "payroll.csv")
	copyFile(t, samplePath(t), file)
	if out, errOut, code := u.run("approve", "--key", k.alice.Path, "payroll.csv"); code != 0 {
		t.Fatalf("approve: exit %d: %s %s", code, out, errOut)
	}
	u.signPlan(t, k.bob, "payroll.csv", file+".bob.sig")
	runID, _ := paidRun(t, u, file)
	db := openSQLite(t, filepath.Join(u.dir, "payout-ledger.db"))
	for _, name := range []string{"payroll.csv.alice.sig", "payroll.csv.bob.sig"} {
		onDisk, err := os.ReadFile(filepath.Join(u.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var stored string
		if err := db.QueryRow(`SELECT json_extract(facts, '$.signature') FROM events WHERE to_state = 'APPROVED'
			AND json_extract(facts, '$.sig_file') = $1`, name).Scan(&stored); err != nil || stored != string(onDisk) {
			t.Errorf("%s is not stored whole (%v)", name, err)
		}
	}
	_, members := exportPack(t, u, runID, "run.zip")
	allowed := filepath.Join(t.TempDir(), "allowed_signers")
	if err := os.WriteFile(allowed, members["allowed_signers"], 0o600); err != nil {
		t.Fatal(err)
	}
	var signers []string
	for _, line := range strings.Split(strings.TrimSpace(string(members["approvals.jsonl"])), "\n") {
		var a struct{ Principal, Statement, Signature string }
		if err := json.Unmarshal([]byte(line), &a); err != nil || a.Signature == "" {
			t.Fatalf("approvals.jsonl line %q: %v", line, err)
		}
		principal := strings.Split(a.Principal, ",")[0]
		if out, err := signaturetest.Verify(t, allowed, principal, "payout-plan", members[a.Signature], members[a.Statement]); err != nil {
			t.Errorf("ssh-keygen -Y verify of %s over %s: %v: %s", a.Signature, a.Statement, err, out)
		}
		signers = append(signers, a.Principal)
	}
	if got := strings.Join(signers, " "); got != "alice bob,mallory" && got != "bob,mallory alice" {
		t.Errorf("approvals.jsonl names %q, want alice and bob", got)
	}
}

// (6) A key retired with valid-before cannot lower the policy through an event dated back to
// when it was trusted: the run pays nothing (exit 5) and audit verify names the date.
func TestBackdatedLoweringByARetiredKeyPaysNothing(t *testing.T) {
	t.Parallel()
	bothEngines(t, backdatedLowering)
}

func backdatedLowering(t *testing.T, engine string) {
	sb := newSandbox(t)
	u, db := insiderLedger(t, engine, sb)
	k := newSigners(t, u)
	dave := signaturetest.NewKey(t, t.TempDir(), "dave")
	retired := time.Now().UTC().AddDate(0, 0, -10)
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(t.TempDir(), "allowed_signers"), k.alice.AllowedLine("alice"),
		`dave valid-before="`+retired.Format("20060102")+`" `+dave.Public)
	u.env = append(u.env, "PAYOUT_ALLOWED_SIGNERS="+allowed)
	if _, errOut, code := u.run("policy", "--approvals", "1"); code != 0 {
		t.Fatalf("policy: exit %d: %s", code, errOut)
	}
	statement, errOut, code := u.run("policy", "--statement", "--approvals", "0")
	if code != 0 {
		t.Fatalf("policy --statement: exit %d: %s", code, errOut)
	}
	sig := signaturetest.Sign(t, dave, "payout-policy", []byte(statement))
	facts, _ := json.Marshal(map[string]string{"approvals": "0", "was": "1", "signed_by": "dave", "statement": statement,
		"signatures": strings.TrimSpace(string(sig)) + "\n"})
	lowering := appendChained(t, db, ledger.ChainEvent{To: ledger.EventPolicy, Detail: "approval policy: 0 signers (was 1), lowered with the signatures of dave",
		Facts: string(facts), At: eventTime(retired.AddDate(0, 0, -5))})

	file := filepath.Join(u.dir, "payroll.csv")
	copyFile(t, samplePath(t), file)
	expectExit5(t, u, "backdated", "run", "payroll.csv")
	if n := sb.Stats().Creates; n != 0 {
		t.Fatalf("%d payouts sent on a backdated lowering", n)
	}
	out, errOut, code := u.run("audit", "verify")
	if want := "event " + strconv.FormatInt(lowering, 10) + ": its time"; code != 4 || !strings.Contains(out, want) {
		t.Fatalf("audit verify: exit %d, want 4 saying %q\n%s%s", code, want, out, errOut)
	}
}

// (10) The payload of an event about the ledger is covered: an edited policy event's payload,
// or an edited plan statement, is named by audit verify, and a pack cut after the statement was
// edited carries no approval of it.
func TestEditedPayloadOfLedgerEventsIsNamed(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	u := newUser(t, newSandbox(t))
	k := newSigners(t, u)
	if _, errOut, code := u.run("policy", "--approvals", "1"); code != 0 {
		t.Fatalf("policy: exit %d: %s", code, errOut)
	}
	file := filepath.Join(u.dir, "payroll.csv")
	copyFile(t, samplePath(t), file)
	u.signPlan(t, k.alice, "payroll.csv", file+".alice.sig")
	runID, _ := paidRun(t, u, file)
	db := openSQLite(t, filepath.Join(u.dir, "payout-ledger.db"))
	var policyID, planID int64
	if err := db.QueryRow(`SELECT max(id) FROM events WHERE to_state = 'POLICY'`).Scan(&policyID); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT id FROM events WHERE to_state = 'PLAN'`).Scan(&planID); err != nil {
		t.Fatal(err)
	}
	mustExecArgs(t, db, `UPDATE events SET payload = 'approvals 0' WHERE id = $1`, policyID)
	mustExecArgs(t, db, `UPDATE events SET payload = replace(payload, '6347.10', '9347.10') WHERE id = $1`, planID)
	out, errOut, code := u.run("audit", "verify")
	for _, want := range []string{
		"event " + strconv.FormatInt(policyID, 10) + ": its payload is set, but an event about the ledger carries none",
		"event " + strconv.FormatInt(planID, 10) + ": its payload is not the plan statement its plan_sha256 names",
	} {
		if code != 4 || !strings.Contains(out, want) {
			t.Errorf("audit verify: exit %d, want 4 saying %q\n%s%s", code, want, out, errOut)
		}
	}
	pack := filepath.Join(u.dir, "run.zip")
	if out, errOut, code := u.run("audit", "export", "--run", runID, "--out", pack); code != 0 {
		t.Fatalf("export: exit %d: %s %s", code, out, errOut)
	}
	for name := range readZip(t, pack) {
		if strings.HasSuffix(name, ".plan") {
			t.Errorf("the pack carries the edited statement as %s", name)
		}
	}
	if out, errOut, code := u.run("audit", "verify", "--pack", pack); code != 4 || !strings.Contains(out, "it proves no approval") {
		t.Errorf("audit verify --pack after the statement was edited: exit %d, want 4\n%s%s", code, out, errOut)
	}
}

// ledgerURL is the ledger u's commands use.
func ledgerURL(u *user) string {
	where := ""
	for _, kv := range u.env {
		if v, ok := strings.CutPrefix(kv, "PAYOUT_LEDGER="); ok {
			where = v
		}
	}
	return where
}

// A run checks the chain from the head the last run signed before it pays: an event appended
// since that does not match its hash, or (on PostgreSQL, whose role can set its triggers aside)
// the chain rewritten whole with every hash recomputed, pays nothing (exit 5).
func TestRunChecksTheChainSinceTheSignedHead(t *testing.T) {
	t.Parallel()
	bothEngines(t, chainSinceTheSignedHead)
}

func chainSinceTheSignedHead(t *testing.T, engine string) {
	sb := newSandbox(t)
	u, db := insiderLedger(t, engine, sb)
	keys := t.TempDir()
	svc := signaturetest.NewKey(t, keys, "payout-svc")
	allowed := signaturetest.WriteAllowedSigners(t, filepath.Join(keys, "allowed_signers"), `payout-svc namespaces="payout-pack" `+svc.Public)
	u.env = append(u.env, "PAYOUT_SIGNING_KEY="+svc.Path, "PAYOUT_ALLOWED_SIGNERS="+allowed)
	paidRun(t, u, samplePath(t))
	example := filepath.Join(u.dir, "example.csv")
	if _, errOut, code := u.run("template", "--example", "--out", example); code != 0 {
		t.Fatalf("template: exit %d: %s", code, errOut)
	}
	sent := sb.Stats().Creates

	var id int64
	if err := db.QueryRow(`SELECT max(id) FROM (SELECT id FROM events UNION ALL SELECT id FROM row_events) AS c`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	mustExecArgs(t, db, `INSERT INTO events (id, ref, run_id, at, from_state, to_state, detail, payload, actor, version, facts, personal, prev_hash, hash)
		VALUES ($1, '', '', $2, '', 'NOTE', 'a note', '', 'dba', 'v', '', '', 'x', 'forged')`, id+1, eventTime(time.Now()))
	expectExit5(t, u, "does not check out: event "+strconv.FormatInt(id+1, 10), "run", "example.csv")
	if engine == "postgres" {
		mustExecArgs(t, db, `SET session_replication_role = replica`) // the triggers set aside, as the role can
		mustExecArgs(t, db, `DELETE FROM events WHERE id = $1`, id+1)
		rewriteChain(t, ledgerURL(u))
		expectExit5(t, u, "the chain up to it was rewritten", "run", "example.csv")
	}
	if n := sb.Stats().Creates; n != sent {
		t.Fatalf("%d payouts sent on a chain that does not check out", n-sent)
	}
}
