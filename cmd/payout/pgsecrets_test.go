package main_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/payout/payout/batch/signature/signaturetest"
	"github.com/payout/payout/internal/pgtest"
)

// A PostgreSQL ledger on another host is refused when its connection could fall back to
// plaintext (exit 2, before anything is sent, saying what to write); the password is not shown.
func TestCommandRefusesAPlaintextLedgerOnAnotherHost(t *testing.T) {
	t.Parallel()
	u := newUserWithoutLedger(t, newSandbox(t))
	u.env = append(u.env, "PAYOUT_LEDGER=postgres://svc:s3cr3t-pw@192.0.2.1:5432/ledger", "PGSSLMODE=")
	for _, args := range [][]string{{"init"}, {"status"}, {"audit", "verify"}} {
		out, errOut, code := u.run(args...)
		if code != 2 || !strings.Contains(errOut, "sslmode=verify-full") || strings.Contains(out+errOut, "s3cr3t-pw") {
			t.Errorf("payout %s: exit %d: %s %s; want 2 saying sslmode=verify-full, without the password", strings.Join(args, " "), code, out, errOut)
		}
	}
}

// The password of PAYOUT_LEDGER reaches nothing the program writes or shows: not its output,
// reports, signed head, metrics file or pack, not the processes registry or the server's view
// of its sessions, not its argv; its environment holds it once, as it was given.
func TestALedgerPasswordReachesNothingWritten(t *testing.T) {
	t.Parallel()
	const pw = "s3cr3t-pw"
	u := newUserWithoutLedger(t, newSandbox(t))
	where := pgtest.New(t)
	withPassword := strings.Replace(where, "postgres://postgres@", "postgres://postgres:"+pw+"@", 1)
	keys := t.TempDir()
	svc := signaturetest.NewKey(t, keys, "payout-svc")
	u.env = append(u.env, "PAYOUT_LEDGER="+withPassword, "PAYOUT_SIGNING_KEY="+svc.Path)
	var shown strings.Builder
	run := func(args ...string) string {
		out, errOut, code := u.run(args...)
		shown.WriteString(out + errOut)
		if code != 0 {
			t.Fatalf("payout %s: exit %d: %s %s", strings.Join(args, " "), code, out, errOut)
		}
		return out
	}
	run("init")
	out := run("run", "--json", "--metrics-file", filepath.Join(u.dir, "payout.prom"), "-v", samplePath(t))
	var res struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("run --json: %v: %s", err, out)
	}
	run("status")
	run("audit", "verify")
	pack := filepath.Join(u.dir, "run.zip")
	run("audit", "export", "--run", res.RunID, "--out", pack, "--with-input")
	if strings.Contains(shown.String(), pw) {
		t.Errorf("the password was shown:\n%s", shown.String())
	}
	if found := filesHolding(t, u.dir, []string{pw}); len(found) > 0 {
		t.Errorf("files written hold the password: %v", found)
	}
	zr, err := zip.OpenReader(pack)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(rc)
		rc.Close()
		if bytes.Contains(data, []byte(pw)) {
			t.Errorf("pack member %s holds the password", f.Name)
		}
	}
	zr.Close()

	// A process that holds the ledger: the registry, its sessions, argv and environment.
	dir := filepath.Join(u.dir, "shared")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binPath, "watch", "--settle", "0", dir)
	cmd.Dir, cmd.Env = u.dir, u.env
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if strings.Contains(stderr.String(), pw) {
			t.Errorf("watch showed the password: %s", stderr.String())
		}
	}()
	db := pgOpen(t, where)
	defer db.Close()
	var registry string
	for deadline := time.Now().Add(30 * time.Second); registry == "" && time.Now().Before(deadline); {
		_ = db.QueryRow(`SELECT COALESCE(string_agg(CAST(p AS text), ' '), '') FROM processes p`).Scan(&registry)
		time.Sleep(20 * time.Millisecond) // polling for the watcher's row; no timing is asserted
	}
	if registry == "" || strings.Contains(registry, pw) || !strings.Contains(registry, strconv.Itoa(cmd.Process.Pid)) {
		t.Errorf("processes registry %q: want the watcher's row (pid %d) without the password", registry, cmd.Process.Pid)
	}
	var sessions string
	if err := db.QueryRow(`SELECT COALESCE(string_agg(application_name || ' ' || query, ' | '), '') FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&sessions); err != nil || strings.Contains(sessions, pw) {
		t.Errorf("the server's view of the sessions %q (%v) holds the password", sessions, err)
	}
	proc := "/proc/" + strconv.Itoa(cmd.Process.Pid)
	if argv, err := os.ReadFile(proc + "/cmdline"); err != nil || bytes.Contains(argv, []byte(pw)) {
		t.Errorf("argv %q (%v) holds the password", argv, err)
	}
	if environ, err := os.ReadFile(proc + "/environ"); err != nil || bytes.Count(environ, []byte(pw)) != 1 {
		t.Errorf("environ (%v) holds the password %d times, want once (PAYOUT_LEDGER as given)", err, bytes.Count(environ, []byte(pw)))
	}
}
