package main_test

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	osuser "os/user"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/internal/fakeclock"
	"github.com/payout/payout/ledger"
)

// paidRun pays the sample file and returns the run's id and report paths.
func paidRun(t *testing.T, u *user, file string) (string, []string) {
	t.Helper()
	out, errOut, code := u.run("run", "--json", file)
	if code != 0 {
		t.Fatalf("run exit %d: %s %s", code, out, errOut)
	}
	var res struct {
		RunID   string   `json:"run_id"`
		Reports []string `json:"reports"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("run --json: %v: %s", err, out)
	}
	for i, p := range res.Reports {
		if !filepath.IsAbs(p) {
			res.Reports[i] = filepath.Join(u.dir, p)
		}
	}
	return res.RunID, res.Reports
}

// sqlOn runs statements on the user's ledger file by hand, as with the sqlite3 shell.
func sqlOn(t *testing.T, u *user, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(u.dir, "payout-ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// wantLastActor checks who the last event of a payout says recorded it, and that it names the
// program's version.
func wantLastActor(t *testing.T, ledgerPath, ref, want string) {
	t.Helper()
	db, err := sql.Open("sqlite", ledgerPath+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var actor, version string
	if err := db.QueryRow(`SELECT actor, version FROM events WHERE ref = ? ORDER BY id DESC LIMIT 1`, ref).Scan(&actor, &version); err != nil {
		t.Fatal(err)
	}
	if actor != want || version == "" || version == "unknown" {
		t.Errorf("last event of %s: actor %q, version %q; want actor %q and a version", ref, actor, version, want)
	}
}

var chainHeadLine = regexp.MustCompile(`chain head (\d+:[0-9a-f]{64})`)

func TestAuditVerifyNamesHandEditsOfTheLedger(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	u := newUser(t, newSandbox(t))
	_, reports := paidRun(t, u, samplePath(t))
	out, errOut, code := u.run("audit", "verify")
	m := chainHeadLine.FindStringSubmatch(out)
	if code != 0 || !strings.HasPrefix(out, "intact: ") || m == nil {
		t.Fatalf("audit verify of an untouched ledger: exit %d: %s %s", code, out, errOut)
	}
	// The run's report was written after its last payout's event: it pins the chain up to there.
	// Only the run's end (its status and exit code, a row event) follows it.
	html := readFile(t, reports[len(reports)-1])
	pinned := regexp.MustCompile(`id="chain-head">(\d+):([0-9a-f]{64})<`).FindStringSubmatch(html)
	head, err := ledger.ParseChainHead(m[1])
	if err != nil || pinned == nil || pinned[1] != fmt.Sprint(head.ID-1) {
		t.Fatalf("report %s prints chain head %v, want the entry before verify's head %s", reports[len(reports)-1], pinned, m[1])
	}
	db, err := sql.Open("sqlite", filepath.Join(u.dir, "payout-ledger.db")+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM (SELECT id, hash FROM events UNION ALL SELECT id, hash FROM row_events) WHERE id = ? AND hash = ?`,
		pinned[1], pinned[2]).Scan(&n); err != nil || n != 1 {
		t.Errorf("the report's chain head %s:%s is not in the chain (%d, %v)", pinned[1], pinned[2], n, err)
	}
	db.Close()

	me, err := osuser.Current()
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	wantLastActor(t, filepath.Join(u.dir, "payout-ledger.db"), "PAY-2026-11-007", me.Username+"@"+host)

	sqlOn(t, u, `UPDATE payouts SET amount = '1.00' WHERE ref = 'PAY-2026-11-007'`)
	out, errOut, code = u.run("audit", "verify")
	if code != 4 || !strings.Contains(out, `payout PAY-2026-11-007: amount in the payouts table is "1.00"`) || !strings.Contains(errOut, "chain head") {
		t.Errorf("after an amount edited by hand: exit %d: %s %s", code, out, errOut)
	}
	sqlOn(t, u, `DROP TRIGGER events_no_update`, `UPDATE events SET to_state = 'FAILED' WHERE id = 60`)
	out, _, code = u.run("audit", "verify")
	if code != 4 || !strings.Contains(out, "event 60: ") || !strings.Contains(out, "does not match its hash") {
		t.Errorf("after an event edited by hand: exit %d: %s", code, out)
	}
}

func TestAuditVerifyRunsTheFileCheck(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	paidRun(t, u, samplePath(t))
	damageLeaf(t, filepath.Join(u.dir, "payout-ledger.db"), "events") // old history, which paying a new file never reads
	out, errOut, code := u.run("audit", "verify")
	if code == 0 || !strings.Contains(out+errOut, "damaged") {
		t.Errorf("audit verify of a damaged ledger: exit %d: %s %s", code, out, errOut)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAuditPackIsVerifiedWithoutTheLedger(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	u := newUser(t, newSandbox(t))
	runID, _ := paidRun(t, u, samplePath(t))
	pack := filepath.Join(u.dir, "evidence.zip")
	out, errOut, code := u.run("audit", "export", "--run", runID, "--out", pack, "--with-input")
	if code != 0 || !strings.Contains(out, "wrote "+pack) {
		t.Fatalf("export exit %d: %s %s", code, out, errOut)
	}
	wantMode(t, pack, 0o600)
	members := readZip(t, pack)
	for _, name := range []string{"run.json", "events.jsonl", "approvals.jsonl", "SHA256SUMS", "input/sample-payroll.csv"} {
		if _, ok := members[name]; !ok {
			t.Errorf("pack lacks %s: has %v", name, keys(members))
		}
	}
	for _, name := range []string{"payout-ledger.db", "payout-ledger.db-wal", "payout-ledger.db-shm"} {
		os.Remove(filepath.Join(u.dir, name))
	}
	out, errOut, code = u.run("audit", "verify", "--pack", pack)
	if code != 0 || !strings.HasPrefix(out, "intact: pack of run "+runID+", 8 members, 150 events") {
		t.Fatalf("verify --pack without the ledger: exit %d: %s %s", code, out, errOut)
	}

	// One event rewritten, and SHA256SUMS written again to match: the event's own hash gives it away.
	events := strings.Replace(string(members["events.jsonl"]), `"to_state":"SUBMITTED"`, `"to_state":"FAILED"`, 1)
	if events == string(members["events.jsonl"]) {
		t.Fatalf("no SUBMITTED event to forge in:\n%.2000s", events)
	}
	forged := filepath.Join(u.dir, "forged.zip")
	members["events.jsonl"] = []byte(events)
	writeZipWithSums(t, forged, members)
	out, _, code = u.run("audit", "verify", "--pack", forged)
	if code != 4 || !regexp.MustCompile(`event \d+ \(payout PAY-2026-11-\d+\): its content does not match its hash`).MatchString(out) {
		t.Errorf("verify of a forged pack: exit %d: %s", code, out)
	}
	// A member changed after the pack was written, SHA256SUMS left alone.
	members = readZip(t, pack)
	members["approvals.jsonl"] = []byte(`{"approved_by":"nobody"}` + "\n")
	writeZip(t, forged, members)
	out, _, code = u.run("audit", "verify", "--pack", forged)
	if code != 4 || !strings.Contains(out, "approvals.jsonl does not match its SHA-256 in SHA256SUMS") {
		t.Errorf("verify of a pack with a changed member: exit %d: %s", code, out)
	}
}

func TestAuditExportRefusesAnInputThatChanged(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	file := filepath.Join(u.dir, "pay.csv")
	copyFile(t, samplePath(t), file)
	runID, _ := paidRun(t, u, file)
	if err := os.WriteFile(file, []byte("external_invoice_ref\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pack := filepath.Join(u.dir, "evidence.zip")
	out, errOut, code := u.run("audit", "export", "--run", runID, "--out", pack, "--with-input")
	if code != 2 || !strings.Contains(errOut, "is not the one the run read") {
		t.Errorf("export with a changed input: exit %d: %s %s", code, out, errOut)
	}
	if _, err := os.Stat(pack); err == nil {
		t.Error("a pack was written")
	}
}

func wantMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s: mode %04o, want %04o", filepath.Base(path), got, want)
	}
}

func readZip(t *testing.T, path string) map[string][]byte {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name], err = io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func writeZip(t *testing.T, path string, members map[string][]byte) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range members {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

func writeZipWithSums(t *testing.T, path string, members map[string][]byte) {
	t.Helper()
	var sums strings.Builder
	for name, data := range members {
		if name != "SHA256SUMS" {
			sum := sha256.Sum256(data)
			fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), name)
		}
	}
	members["SHA256SUMS"] = []byte(sums.String())
	writeZip(t, path, members)
}

func TestPurgeMasksOldFinalPayoutsAndLeavesPendingOnes(t *testing.T) {
	t.Parallel()
	clock := fakeclock.New(time.Now())
	sb := sandbox.New(sandbox.Options{AuthToken: "e2e-token", HashKey: []byte("e2e-hash-key"), Now: clock.Now,
		SettleAfter: time.Hour, SettleInterval: -1})
	t.Cleanup(sb.Close)
	u := newUser(t, sb)
	header := "external_invoice_ref,recipient_reference,bank,third_party_account_no,amount\n"
	old, fresh := filepath.Join(u.dir, "old.csv"), filepath.Join(u.dir, "fresh.csv")
	os.WriteFile(old, []byte(header+"OLD-1,Siti Aminah,Maybank,5550001234,10.00\nOLD-2,Tan Ah Kow,Maybank,5550005678,20.00\n"), 0o600)
	os.WriteFile(fresh, []byte(header+"NEW-1,Raju a/l Muthu,Maybank,5550009999,30.00\n"), 0o600)
	paidRun(t, u, old)
	clock.Advance(2 * time.Hour)
	if out, errOut, code := u.run("reconcile"); code != 0 {
		t.Fatalf("reconcile exit %d: %s %s", code, out, errOut)
	}
	if recon, _ := filepath.Glob(filepath.Join(u.dir, "reports", "reconcile.*.html")); len(recon) != 1 ||
		!regexp.MustCompile(`id="chain-head">\d+:[0-9a-f]{64}<`).MatchString(readFile(t, recon[0])) {
		t.Errorf("the reconciliation report %v prints no chain head", recon)
	}
	paidRun(t, u, fresh) // PENDING at the service: SUBMITTED, not final
	statusBefore, _, _ := u.run("status")
	// Purge counts from when a payout last changed; the ledger's clock is the real one.
	sqlOn(t, u, `UPDATE payouts SET updated_at = '2025-01-01T00:00:00.000000000Z'`)

	out, errOut, code := u.run("purge", "--before", time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly))
	if code != 2 || !strings.Contains(errOut, "is after today") {
		t.Errorf("purge of tomorrow: exit %d: %s %s", code, out, errOut)
	}
	out, errOut, code = u.run("purge", "--before", "2026-01-01")
	if code != 4 || !strings.HasPrefix(out, "purged 2 payout(s) last changed before 2026-01-01") ||
		!strings.Contains(errOut, "left NEW-1: SUBMITTED is not final") {
		t.Fatalf("purge: exit %d: %s %s", code, out, errOut)
	}
	out, _, _ = u.run("status", "OLD-1")
	if strings.Contains(out, "Siti Aminah") || strings.Contains(out, "5550001234") ||
		!regexp.MustCompile(`SUCCEEDED -> SUCCEEDED\s+\S+@\S+\s+purge --before 2026-01-01: name and account number masked`).MatchString(out) {
		t.Errorf("status of a purged payout shows its name or account, or not the purge and who made it:\n%s", out)
	}
	if statusAfter, _, _ := u.run("status"); statusAfter != statusBefore {
		t.Errorf("totals changed by purge:\n%s\nthen\n%s", statusBefore, statusAfter)
	}
	// The update times this test moved back by hand are named, and nothing else: the purge itself
	// keeps the trail.
	backdated := regexp.MustCompile(`^payout (OLD-1|OLD-2|NEW-1): updated_at in the payouts table is "2025-01-01T00:00:00.000000000Z", its events say "[^"]+" \(edited by hand\)$`)
	out, errOut, code = u.run("audit", "verify")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range lines {
		if !backdated.MatchString(l) {
			t.Errorf("audit verify after purge: a finding other than the update times moved back by this test: %q", l)
		}
	}
	if code != 4 || len(lines) != 3 {
		t.Errorf("audit verify after purge: exit %d, want 4 naming the 3 update times moved back: %s %s", code, out, errOut)
	}
	sqlOn(t, u, `UPDATE payouts SET recipient = 'Siti Aminah' WHERE ref = 'OLD-1'`)
	if out, _, code := u.run("audit", "verify"); code != 4 || !strings.Contains(out, `payout OLD-1: recipient in the payouts table is "Siti Aminah", its events say "S***"`) {
		t.Errorf("audit verify after a purged name was put back by hand: exit %d: %s", code, out)
	}
}

func TestLedgerLockReportsAndPacksAreReadableByTheirOwnerOnly(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	wantMode(t, filepath.Join(u.dir, "payout-ledger.db"), 0o600)
	runID, reports := paidRun(t, u, samplePath(t))
	for _, p := range append(reports, filepath.Join(u.dir, "payout-ledger.db.lock")) {
		wantMode(t, p, 0o600)
	}
	for _, side := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(filepath.Join(u.dir, "payout-ledger.db"+side)); err == nil {
			wantMode(t, filepath.Join(u.dir, "payout-ledger.db"+side), 0o600)
		}
	}
	pack := filepath.Join(u.dir, "pack.zip")
	if out, errOut, code := u.run("audit", "export", "--run", runID, "--out", pack); code != 0 {
		t.Fatalf("export exit %d: %s %s", code, out, errOut)
	}
	wantMode(t, pack, 0o600)
}
