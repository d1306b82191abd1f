package main_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payout/payout/ledger"
)

// TestCrontabOverlapsAreQuiet runs the README crontab's three commands (the nightly run, watch
// --once, reconcile) at once, twice: first while another process holds the ledger, so that
// each of them finds it busy (the run and reconcile wait for it, watch --once leaves its inbox
// to the next turn and exits 0), then all three started together. None exits 1, and the file
// watch --once left is paid by its next turn.
func TestCrontabOverlapsAreQuiet(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	drop := filepath.Join(u.dir, "drop")
	for _, sub := range []string{"inbox", "processing", "done", "failed", "reports"} {
		if err := os.MkdirAll(filepath.Join(drop, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	sample, err := os.ReadFile(samplePath(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(u.dir, "payroll.csv"), sample, 0o600); err != nil {
		t.Fatal(err)
	}
	header := "external_invoice_ref,recipient_reference,bank,third_party_account_no,amount,payment_description\n"
	dropped := filepath.Join(drop, "inbox", "vendors.csv")
	if err := os.WriteFile(dropped, []byte(header+"CRON-1,Ali,Maybank,000181590832,100.00,Gaji\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	nightly := []string{"run", "-v", "--report-dir", "reports", "payroll.csv"}
	watchOnce := []string{"watch", "-v", "--once", "--settle", "0s", "drop"}
	reconcile := []string{"reconcile", "-v", "--report-dir", "reports/reconcile"}

	// Another process holds the ledger: the run and reconcile say they wait, watch --once ends.
	lock, err := ledger.Take(context.Background(), filepath.Join(u.dir, "payout-ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	run, recon := u.start(t, nightly...), u.start(t, reconcile...)
	_, errOut, code := u.runWithin(time.Minute, watchOnce...)
	if code != 0 || !strings.Contains(errOut, "left to the next turn") {
		t.Errorf("watch --once beside a busy ledger: exit %d, want 0 saying it leaves the inbox to the next turn: %s", code, errOut)
	}
	if _, err := os.Stat(dropped); err != nil {
		t.Errorf("watch --once beside a busy ledger moved the dropped file: %v", err)
	}
	run.waitFor(t, "waiting for it")
	recon.waitFor(t, "waiting for it")
	if err := lock.Close(); err != nil {
		t.Fatal(err)
	}
	if code, errOut := run.wait(t); code != 0 {
		t.Errorf("the nightly run after waiting: exit %d: %s", code, errOut)
	}
	if code, errOut := recon.wait(t); code != 0 {
		t.Errorf("reconcile after waiting: exit %d: %s", code, errOut)
	}

	// The three together, as cron starts them in the same minute.
	procs := []*started{u.start(t, nightly...), u.start(t, watchOnce...), u.start(t, reconcile...)}
	for i, p := range procs {
		if code, errOut := p.wait(t); code != 0 {
			t.Errorf("%v started with the others: exit %d: %s", [][]string{nightly, watchOnce, reconcile}[i], code, errOut)
		}
	}
	if _, _, code := u.runWithin(time.Minute, watchOnce...); code != 0 {
		t.Errorf("the next turn of watch --once: exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(drop, "done", "vendors.csv")); err != nil {
		t.Errorf("the file left by watch --once was not paid by a later turn: %v", err)
	}
}

// started is a command running in the background, its stderr kept.
type started struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr bytes.Buffer
	done   chan error
}

func (s *started) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.Write(p)
}

func (s *started) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// start starts the binary as the user, killed at the end of the test if still running.
func (u *user) start(t *testing.T, args ...string) *started {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s := &started{cmd: exec.CommandContext(ctx, binPath, args...), done: make(chan error, 1)}
	s.cmd.Dir, s.cmd.Env, s.cmd.Stderr = u.dir, u.env, s
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	return s
}

// waitFor waits until the command's stderr says want, failing the test after a minute or when
// the command ends first.
func (s *started) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(time.Minute)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(s.text(), want) {
		select {
		case err := <-s.done:
			s.done <- err
			t.Fatalf("%v ended (%v) before saying %q: %s", s.cmd.Args, err, want, s.text())
		case <-deadline:
			t.Fatalf("%v did not say %q within a minute: %s", s.cmd.Args, want, s.text())
		case <-tick.C:
		}
	}
}

// wait waits, at most two minutes, for the command to end, and returns its exit code and stderr.
func (s *started) wait(t *testing.T) (int, string) {
	t.Helper()
	select {
	case err := <-s.done:
		s.done <- err
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), s.text()
		}
		if err != nil {
			t.Fatalf("%v: %v", s.cmd.Args, err)
		}
		return 0, s.text()
	case <-time.After(2 * time.Minute):
		t.Fatalf("%v did not end within two minutes: %s", s.cmd.Args, s.text())
	}
	return 0, ""
}

// TestBusyLedgerIsSaidOnATerminal: a person who runs a file while cron's command holds the
// ledger is told what the run waits for, instead of minutes of nothing; the run then pays.
func TestBusyLedgerIsSaidOnATerminal(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	lock, err := ledger.Take(context.Background(), filepath.Join(u.dir, "payout-ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	term := u.startInTerminal(t, "run", samplePath(t))
	deadline := time.After(time.Minute)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(string(term.output()), "waiting up to 10m for it") {
		select {
		case <-deadline:
			t.Fatalf("the run did not say it waits for the ledger: %q", term.output())
		case <-tick.C:
		}
	}
	if err := lock.Close(); err != nil {
		t.Fatal(err)
	}
	if err := term.wait(); err != nil {
		t.Errorf("the run after the ledger was let go: %v: %q", err, term.output())
	}
}
