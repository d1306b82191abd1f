package main_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/ledger"
	"github.com/payout/payout/ledger/ledgertest"
)

func copyFile(tb testing.TB, from, to string) {
	tb.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		tb.Fatal(err)
	}
}

func TestCommandWatchOnce(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	u := newUser(t, sb)
	dir := filepath.Join(u.dir, "payroll")
	if err := os.MkdirAll(filepath.Join(dir, "inbox"), 0o750); err != nil {
		t.Fatal(err)
	}
	copyFile(t, samplePath(t), filepath.Join(dir, "inbox", "november.csv"))
	if err := os.WriteFile(filepath.Join(dir, "inbox", "broken.csv"), []byte("external_invoice_ref,amount\nX-1,10.00\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := u.run("watch", "--once", "--settle", "0", dir)
	if code != 3 {
		t.Fatalf("watch --once exit %d, want 3 (one file rejected): %s", code, errOut)
	}
	for _, want := range []string{"done/november.csv", "failed/broken.csv", "failed/broken.csv.why.txt"} {
		if _, err := os.Stat(filepath.Join(dir, want)); err != nil {
			t.Errorf("%s: %v", want, err)
		}
	}
	if reports, _ := filepath.Glob(filepath.Join(dir, "reports", "november.*.result.csv")); len(reports) != 1 {
		t.Errorf("reports: %v", reports)
	}

	// The same file dropped again pays nobody twice and is reported as a duplicate.
	copyFile(t, samplePath(t), filepath.Join(dir, "inbox", "november-again.csv"))
	if _, errOut, code := u.run("watch", "--once", "--settle", "0", dir); code != 0 {
		t.Fatalf("second watch exit %d: %s", code, errOut)
	}
	if notes, _ := filepath.Glob(filepath.Join(dir, "done", "november-again*.duplicate.txt")); len(notes) != 1 {
		t.Errorf("duplicate note: %v", notes)
	}
	if n := sb.Stats().Creates; n != 50 {
		t.Errorf("service saw %d creates, want 50", n)
	}
}

func TestCommandCallbacks(t *testing.T) {
	t.Parallel()
	const hashKey = "e2e-hash-key"
	sb := newSandbox(t)
	u := newUser(t, sb)
	if _, errOut, code := u.run("run", samplePath(t)); code != 0 {
		t.Fatalf("run exit %d: %s", code, errOut)
	}
	ledgerPath := filepath.Join(u.dir, "payout-ledger.db")
	db, err := ledger.Open(context.Background(), ledgerPath, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	list := ledgertest.Payouts(t, db, ledger.Filter{})
	if len(list) == 0 {
		t.Fatal("the ledger holds no payout")
	}
	p := list[0]

	cmd := exec.Command(binPath, "callbacks", "--listen", "127.0.0.1:0")
	cmd.Dir, cmd.Env = u.dir, append(append([]string(nil), u.env...), "PAYOUT_HASH_KEY="+hashKey)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stderr)
	var url string
	for url == "" && lines.Scan() {
		if _, rest, ok := strings.Cut(lines.Text(), "listening on "); ok {
			url, _, _ = strings.Cut(rest, " ")
		}
	}
	if url == "" {
		t.Fatal("callbacks did not say where it listens")
	}
	go func() {
		for lines.Scan() {
		}
	}()
	post := func(key string) int {
		t.Helper()
		return postCallback(t, url, api.CallbackPayload{InvoiceNo: p.InvoiceNo, InvoiceStatusID: 2, InvoiceStatus: "SUCCESS",
			Amount: p.Amount, BankReferenceNo: "BR-123", BankResponseSuccess: true}, key)
	}
	if code := post("not-the-key"); code != http.StatusUnauthorized {
		t.Errorf("a token signed with another key answered %d, want 401", code)
	}
	if code := post(hashKey); code != http.StatusOK {
		t.Errorf("a good callback answered %d", code)
	}
	got, err := db.Get(context.Background(), p.Ref)
	if err != nil || got.State != ledger.Succeeded || got.BankReferenceNo != "BR-123" {
		t.Errorf("after the callback: %+v, %v", got, err)
	}
	wantLastActor(t, ledgerPath, p.Ref, "service callback")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("callbacks after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("callbacks did not stop on SIGTERM")
	}
}

func TestCommandReconcile(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	sb := newSandbox(t)
	u := newUser(t, sb)
	if _, _, code := u.run("reconcile", "--ledger", "missing.db"); code != 2 {
		t.Errorf("reconcile of a missing ledger exit %d, want 2", code)
	}
	if _, errOut, code := u.run("run", samplePath(t)); code != 0 {
		t.Fatalf("run exit %d: %s", code, errOut)
	}
	sb.Settle()
	out, errOut, code := u.run("reconcile", "--json")
	if code != 0 || !strings.Contains(out, `"succeeded":50`) {
		t.Fatalf("reconcile exit %d: %s %s", code, out, errOut)
	}
	out, _, code = u.run("status")
	if code != 0 || !strings.Contains(out, "SUCCEEDED") {
		t.Errorf("status after reconcile exit %d:\n%s", code, out)
	}
}

func TestCommandInterruptThenResume(t *testing.T) {
	t.Parallel()
	sb := sandbox.New(sandbox.Options{AuthToken: "e2e-token", HashKey: []byte("e2e-hash-key"),
		Faults: sandbox.Faults{Latency: 20 * time.Millisecond}})
	t.Cleanup(sb.Close)
	u := newUser(t, sb)
	cmd := exec.Command(binPath, "run", "--workers", "2", samplePath(t))
	cmd.Dir, cmd.Env = u.dir, u.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if !waitThenSignal(cmd, exited, syscall.SIGINT, func() bool { return sb.Stats().Creates >= 5 }) {
		t.Fatal("the run finished before it could be interrupted")
	}
	err := <-exited
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(stdout.String(), "run the same command again to resume") {
		t.Fatalf("after SIGINT: %v, stdout %q, stderr %q; want exit 1 saying to run again", err, stdout.String(), stderr.String())
	}
	if said := stdout.String() + stderr.String(); !strings.Contains(said, "stopped by signal (interrupt)") || strings.Contains(said, "context canceled") {
		t.Errorf("after SIGINT: stdout %q, stderr %q; want it to say it was stopped by signal (interrupt)", stdout.String(), stderr.String())
	}
	if n := sb.Stats().Creates; n >= 50 {
		t.Fatalf("SIGINT did not stop the sending: %d creates", n)
	}
	if _, errOut, code := u.run("run", samplePath(t)); code != 0 {
		t.Fatalf("resume exit %d: %s", code, errOut)
	}
	counts := sb.CreateCounts()
	if len(counts) != 50 {
		t.Errorf("%d references created, want 50", len(counts))
	}
	for ref, n := range counts {
		if n != 1 {
			t.Errorf("%s created %d times", ref, n)
		}
	}
}

// waitThenSignal sends sig once ready() holds; it reports false when the process exited first.
func waitThenSignal(cmd *exec.Cmd, exited chan error, sig os.Signal, ready func() bool) bool {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			exited <- err
			return false
		case <-tick.C:
			if ready() {
				_ = cmd.Process.Signal(sig)
				return true
			}
		}
	}
}
