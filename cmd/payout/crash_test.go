package main_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/ledger"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// TestCrashResume SIGKILLs the built binary at seeded moments while it pays a file against a sandbox
// that loses responses, reruns it until it exits 0, and then asserts that every row was created at
// the service exactly once. `make crashtest` runs the long campaign (PAYOUT_CRASH_SEEDS, _ROWS).
func TestCrashResume(t *testing.T) {
	seeds := envInt("PAYOUT_CRASH_SEEDS", 3)
	rows := envInt("PAYOUT_CRASH_ROWS", 150)
	kills := envInt("PAYOUT_CRASH_KILLS", 6)
	bin := binPath
	for seed := 1; seed <= seeds; seed++ {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			crashCampaign(t, bin, uint64(seed), rows, kills)
		})
	}
}

func crashCampaign(t *testing.T, bin string, seed uint64, rows, kills int) {
	rng := rand.New(rand.NewPCG(seed, 99))
	sb := sandbox.New(sandbox.Options{AuthToken: "crash-token", HashKey: []byte("crash-key"), Seed: int64(seed),
		Faults: sandbox.Faults{LostResponseRate: 0.1}})
	ts := httptest.NewServer(sb)
	defer ts.Close()
	defer sb.Close()

	dir := t.TempDir()
	input := filepath.Join(dir, "crash.csv")
	var b strings.Builder
	b.WriteString("external_invoice_ref,recipient_reference,bank,third_party_account_no,amount\n")
	for i := 1; i <= rows; i++ {
		fmt.Fprintf(&b, "CR%d-%05d,Staff %d,Maybank,01%08d7,%d.%02d\n", seed, i, i, i, 100+i, i%100)
	}
	if err := os.WriteFile(input, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	ledgerPath := filepath.Join(dir, "ledger.db")
	env := append(os.Environ(),
		"PAYOUT_BASE_URL="+ts.URL, "PAYOUT_AUTH_TOKEN=crash-token", "PAYOUT_VIRTUAL_POOL_REF=POOL",
		"PAYOUT_CALLBACK_URL=http://127.0.0.1:1/cb", "PAYOUT_REDIRECT_URL=http://127.0.0.1:1/r",
		"PAYOUT_LEDGER="+ledgerPath)
	if out, err := exec.Command(bin, "init", "--ledger", ledgerPath).CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	args := []string{"run", "--rate", "2000", "--workers", "8", "--unknown-grace", "50ms", "--report-dir", filepath.Join(dir, "reports"), input}

	killed := 0
	for k := 0; k < kills; k++ {
		// Kill once the service has seen a seeded number of further creates: a moment inside the
		// sending, wherever the workers happen to be.
		target := sb.Stats().Creates + 1 + rng.IntN(rows/kills+1)
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		if !waitThenKill(cmd, exited, func() bool { return sb.Stats().Creates >= target }) {
			break // it finished first
		}
		killed++
	}
	if killed == 0 {
		t.Fatal("the binary finished before any kill: the campaign proved nothing")
	}
	t.Logf("killed %d times at %d creates of %d rows", killed, sb.Stats().Creates, rows)
	// Rerun until it exits 0: each run resumes what the last one left.
	for attempt := 0; ; attempt++ {
		if attempt == 10 {
			t.Fatal("no clean finish after 10 reruns")
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err == nil {
			break
		}
		if !errors.As(err, &exit) {
			t.Fatalf("rerun: %v\n%s", err, out)
		}
		t.Logf("rerun %d exited %d: %s", attempt, exit.ExitCode(), out)
	}
	counts := sb.CreateCounts()
	for i := 1; i <= rows; i++ {
		ref := fmt.Sprintf("CR%d-%05d", seed, i)
		if counts[ref] != 1 {
			t.Errorf("%s created %d times, want exactly 1", ref, counts[ref])
		}
	}
	db, err := ledger.Open(context.Background(), ledgerPath, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	list, err := db.List(context.Background(), ledger.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != rows {
		t.Errorf("ledger holds %d payouts, want %d", len(list), rows)
	}
	for _, p := range list {
		if p.State != ledger.Submitted && p.State != ledger.Succeeded {
			t.Errorf("%s: state %s after a clean finish", p.Ref, p.State)
		}
	}
}

// waitThenKill SIGKILLs the process once ready() holds; it reports false when the process exited first.
func waitThenKill(cmd *exec.Cmd, exited chan error, ready func() bool) bool {
	tick := time.NewTicker(200 * time.Microsecond)
	defer tick.Stop()
	for {
		select {
		case <-exited:
			return false
		case <-tick.C:
			if ready() {
				_ = cmd.Process.Signal(syscall.SIGKILL)
				<-exited
				return true
			}
		}
	}
}
