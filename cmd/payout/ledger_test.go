package main_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runGuarded runs the binary like u.run, but kills it after limit: `callbacks` serves until
// stopped when it accepts the ledger, and a test must fail then, not hang.
func (u *user) runGuarded(limit time.Duration, args ...string) (string, int) {
	u.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Dir, cmd.Env = u.dir, append(append([]string(nil), u.env...), "PAYOUT_HASH_KEY=e2e-hash-key")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return fmt.Sprintf("still running after %s: %s", limit, stderr.String()), -1
	case errors.As(err, &exit):
		return stderr.String(), exit.ExitCode()
	case err != nil:
		u.tb.Fatalf("payout %v: %v", args, err)
	}
	return stderr.String(), 0
}

// everyLedgerCommand runs each command that uses the ledger and wants exit 2 with want in its
// message from each.
func everyLedgerCommand(t *testing.T, u *user, want string) {
	t.Helper()
	drop := filepath.Join(u.dir, "drop")
	if err := os.MkdirAll(filepath.Join(drop, "inbox"), 0o750); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", samplePath(t)},
		{"watch", "--once", drop},
		{"reconcile"},
		{"callbacks", "--listen", "127.0.0.1:0"},
		{"report", "20261124T000000Z-0000"},
		{"status"},
	} {
		errOut, code := u.runGuarded(30*time.Second, args...)
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("payout %s: exit %d, stderr %q; want exit 2 saying %q", args[0], code, errOut, want)
		}
	}
}

// realDir is the user's folder as the binary sees it (the temporary folder may be a symlink).
func realDir(tb testing.TB, u *user) string {
	tb.Helper()
	d, err := filepath.EvalSymlinks(u.dir)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func TestCommandsNeverCreateALedger(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	paid := newUser(t, sb)
	if _, errOut, code := paid.run("run", samplePath(t)); code != 0 {
		t.Fatalf("first run exit %d: %s", code, errOut)
	}
	// The same file from another working folder (cron's, say), where the default ledger is not.
	u := newUserWithoutLedger(t, sb)
	ledgerPath := filepath.Join(realDir(t, u), "payout-ledger.db")
	_, errOut, code := u.run("run", samplePath(t))
	if code != 2 || !strings.Contains(errOut, "no ledger at "+ledgerPath+": create one with `payout init --ledger "+ledgerPath+"`") ||
		!strings.Contains(errOut, "use an absolute path") {
		t.Errorf("run without a ledger: exit %d, stderr %q", code, errOut)
	}
	everyLedgerCommand(t, u, "no ledger at "+ledgerPath)
	if n := sb.Stats().Creates; n != 50 {
		t.Errorf("service saw %d creates, want the first run's 50", n)
	}
	for _, name := range []string{"payout-ledger.db", "payout-ledger.db.lock"} {
		if _, err := os.Stat(filepath.Join(u.dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a refused command left %s: %v", name, err)
		}
	}
	// A dry run needs no ledger, and makes none.
	if out, errOut, code := u.run("run", "--dry-run", samplePath(t)); code != 0 {
		t.Errorf("dry run without a ledger: exit %d: %s %s", code, out, errOut)
	}
	if _, err := os.Stat(ledgerPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dry run made a ledger: %v", err)
	}
}

func TestCommandsRefuseAnEmptyLedger(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	u := newUser(t, sb)
	if _, errOut, code := u.run("run", samplePath(t)); code != 0 {
		t.Fatalf("first run exit %d: %s", code, errOut)
	}
	ledgerPath := filepath.Join(u.dir, "payout-ledger.db")
	if err := os.Truncate(ledgerPath, 0); err != nil { // a copy that was cut short
		t.Fatal(err)
	}
	everyLedgerCommand(t, u, "is empty (0 bytes) and is not a ledger: it may be a truncated copy")
	if _, errOut, code := u.run("run", "--dry-run", samplePath(t)); code != 2 || !strings.Contains(errOut, "is empty") {
		t.Errorf("dry run on an empty ledger: exit %d, stderr %q", code, errOut)
	}
	if n := sb.Stats().Creates; n != 50 {
		t.Errorf("service saw %d creates, want the first run's 50", n)
	}
	if fi, err := os.Stat(ledgerPath); err != nil || fi.Size() != 0 {
		t.Errorf("the empty file was written to: %v", err)
	}
}

func TestCommandsRefuseAFileThatIsNotALedger(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	u := newUserWithoutLedger(t, sb)
	ledgerPath := filepath.Join(u.dir, "payout-ledger.db")
	if err := os.WriteFile(ledgerPath, []byte("external_invoice_ref,amount\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	everyLedgerCommand(t, u, "is not a payout ledger (not a SQLite database)")

	if err := os.Remove(ledgerPath); err != nil {
		t.Fatal(err)
	}
	sdb, err := sql.Open("sqlite", ledgerPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sdb.Exec("CREATE TABLE notes (body TEXT)"); err != nil {
		t.Fatal(err)
	}
	sdb.Close()
	everyLedgerCommand(t, u, "is not a payout ledger (a SQLite database without the ledger's tables)")
	if n := sb.Stats().Creates; n != 0 {
		t.Errorf("service saw %d creates", n)
	}
}

func TestCommandInit(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	u := newUserWithoutLedger(t, sb)
	ledgerPath := filepath.Join(u.dir, "books", "payout.db")
	if _, errOut, code := u.run("init", "--ledger", ledgerPath); code != 2 || !strings.Contains(errOut, "folder must exist") {
		t.Errorf("init into a missing folder: exit %d, stderr %q", code, errOut)
	}
	if err := os.Mkdir(filepath.Dir(ledgerPath), 0o700); err != nil {
		t.Fatal(err)
	}
	u.env = append(u.env, "PAYOUT_LEDGER="+ledgerPath)
	out, errOut, code := u.run("init")
	if code != 0 || !strings.Contains(out, ledgerPath) {
		t.Fatalf("init exit %d: %s %s", code, out, errOut)
	}
	fi, err := os.Stat(ledgerPath)
	if err != nil {
		t.Fatal(err)
	}
	if mode := fi.Mode().Perm(); mode != 0o600 {
		t.Errorf("ledger mode %o, want 600", mode)
	}
	if _, errOut, code := u.run("run", samplePath(t)); code != 0 {
		t.Fatalf("run on the new ledger exit %d: %s", code, errOut)
	}
	before, err := os.ReadFile(ledgerPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := u.run("init"); code != 2 || !strings.Contains(errOut, "already exists") {
		t.Errorf("second init: exit %d, stderr %q", code, errOut)
	}
	if after, err := os.ReadFile(ledgerPath); err != nil || !bytes.Equal(before, after) {
		t.Errorf("a second init changed the ledger (%v)", err)
	}
	if _, errOut, code := u.run("run", samplePath(t)); code != 0 || sb.Stats().Creates != 50 {
		t.Errorf("rerun after a refused init: exit %d, %d creates: %s", code, sb.Stats().Creates, errOut)
	}
}

func TestCommandsRefuseADamagedLedger(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	u := newUser(t, sb)
	if _, errOut, code := u.run("run", samplePath(t)); code != 0 {
		t.Fatalf("first run exit %d: %s", code, errOut)
	}
	ledgerPath := filepath.Join(u.dir, "payout-ledger.db")
	// A copy cut short: the pages it lost could hold any payout, so nothing is paid on it.
	fi, err := os.Stat(ledgerPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(ledgerPath, fi.Size()/4096*4096-4096); err != nil {
		t.Fatal(err)
	}
	// A file of references the ledger has never seen: the damage hides nothing the run could
	// notice on its own.
	var b strings.Builder
	b.WriteString("external_invoice_ref,recipient_reference,bank,third_party_account_no,amount\n")
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&b, "DEC-%03d,Staff %d,Maybank,01%08d7,%d.00\n", i, i, i, 100+i)
	}
	input := filepath.Join(u.dir, "december.csv")
	if err := os.WriteFile(input, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := u.run("run", input)
	if code != 2 || !strings.Contains(errOut, "is damaged") || !strings.Contains(errOut, "cut short") || !strings.Contains(errOut, "Restore the last backup") ||
		!strings.Contains(errOut, ".recover") || !strings.Contains(errOut, "payout reconcile") {
		t.Errorf("run on a damaged ledger: exit %d, stderr %q", code, errOut)
	}
	drop := filepath.Join(u.dir, "drop")
	if err := os.MkdirAll(filepath.Join(drop, "inbox"), 0o750); err != nil {
		t.Fatal(err)
	}
	copyFile(t, input, filepath.Join(drop, "inbox", "december.csv"))
	for _, args := range [][]string{{"watch", "--once", drop}, {"reconcile"}, {"callbacks", "--listen", "127.0.0.1:0"}} {
		if errOut, code := u.runGuarded(30*time.Second, args...); code != 2 || !strings.Contains(errOut, "is damaged") {
			t.Errorf("payout %s on a damaged ledger: exit %d, stderr %q", args[0], code, errOut)
		}
	}
	if n := sb.Stats().Creates; n != 50 {
		t.Errorf("service saw %d creates, want only the first run's 50", n)
	}
}

// TestRunStopsOnDamageItReads: a bad block on a page of payouts is not seen when the ledger
// opens, but a run that looks those payouts up stops before sending anything, saying that the
// ledger is damaged, not that the payouts are new.
func TestRunStopsOnDamageItReads(t *testing.T) {
	t.Parallel() // long, and mostly waiting on processes: beside the other long ones
	sb := newSandbox(t)
	u := newUser(t, sb)
	if _, errOut, code := u.run("run", samplePath(t)); code != 0 {
		t.Fatalf("first run exit %d: %s", code, errOut)
	}
	ledgerPath := filepath.Join(u.dir, "payout-ledger.db")
	damageLeaf(t, ledgerPath, "payouts")
	_, errOut, code := u.run("run", samplePath(t))
	if code != 1 || !strings.Contains(errOut, "is damaged") || !strings.Contains(errOut, "running again cannot fix it") ||
		!strings.Contains(errOut, "Restore the last backup") {
		t.Errorf("rerun on a ledger damaged where it reads: exit %d, stderr %q", code, errOut)
	}
	if _, errOut, code := u.run("reconcile"); code != 1 || !strings.Contains(errOut, "reconcile stopped: the ledger "+ledgerPath+" is damaged") {
		t.Errorf("reconcile of the damaged payouts: exit %d, stderr %q", code, errOut)
	}
	drop := filepath.Join(u.dir, "drop")
	if err := os.MkdirAll(filepath.Join(drop, "inbox"), 0o750); err != nil {
		t.Fatal(err)
	}
	copyFile(t, samplePath(t), filepath.Join(drop, "inbox", "again.csv"))
	if _, errOut, code := u.run("watch", "--once", drop); code != 1 || !strings.Contains(errOut, "is damaged") ||
		!strings.Contains(errOut, "running again cannot fix it") {
		t.Errorf("folder mode on a ledger damaged where it reads: exit %d, stderr %q", code, errOut)
	}
	if n := sb.Stats().Creates; n != 50 {
		t.Errorf("service saw %d creates, want only the first run's 50", n)
	}
}

// damageLeaf writes garbage over a leaf page in the middle of table name of a closed ledger, as a
// bad disk block would.
func damageLeaf(tb testing.TB, path, name string) {
	tb.Helper()
	sdb, err := sql.Open("sqlite", path+"?_pragma=query_only(1)")
	if err != nil {
		tb.Fatal(err)
	}
	var pages []int64
	rows, err := sdb.Query("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno", name)
	if err != nil {
		tb.Fatal(err)
	}
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			tb.Fatal(err)
		}
		pages = append(pages, n)
	}
	var pageSize int64
	if err := errors.Join(rows.Err(), sdb.QueryRow("PRAGMA page_size").Scan(&pageSize), sdb.Close()); err != nil {
		tb.Fatal(err)
	}
	if len(pages) < 3 {
		tb.Fatalf("%s has %d leaf pages: too few to damage one in the middle", name, len(pages))
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	garbage := bytes.Repeat([]byte{0xA5, 0x5A, 0xFF, 0x00}, int(pageSize/4))
	if _, err := f.WriteAt(garbage, (pages[len(pages)/3]-1)*pageSize); err != nil {
		tb.Fatal(err)
	}
}
