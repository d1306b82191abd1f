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
	"github.com/payout/payout/ledger/ledgertest"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// crashSetting is how one seed's campaign runs: settings users run with, against a service that
// answers in 5-50 ms, loses answers and now and then answers 5xx or 429.
type crashSetting struct {
	rate    int // --rate, with --burst 1
	workers int
}

// crashSettings go round by seed, so that a campaign of 5 seeds meets each of them.
var crashSettings = []crashSetting{{100, 8}, {50, 4}, {80, 16}, {60, 6}, {100, 12}}

// crashFaults are the service's faults in every campaign.
var crashFaults = sandbox.Faults{Latency: 5 * time.Millisecond, LatencyJitter: 45 * time.Millisecond,
	LostResponseRate: 0.1, ErrorRate: 0.03, ThrottleRate: 0.02}

// TestCrashResume SIGKILLs the built binary at seeded moments while it pays a file against a sandbox
// that answers slowly, loses answers and answers some 5xx and 429; reruns it until it exits 0; and
// then asserts from the sandbox's own count that every row was created at the service exactly once.
// `make crashtest` runs the long campaign (PAYOUT_CRASH_SEEDS, _ROWS, _KILLS).
func TestCrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("-short leaves out the crash campaign; run without -short for it")
	}
	t.Parallel() // long, and mostly waiting on processes: beside the other long ones
	seeds := envInt("PAYOUT_CRASH_SEEDS", 3)
	rows := envInt("PAYOUT_CRASH_ROWS", 120)
	kills := envInt("PAYOUT_CRASH_KILLS", 6)
	bin := binPath
	for seed := 1; seed <= seeds; seed++ {
		set := crashSettings[(seed-1)%len(crashSettings)]
		t.Run(fmt.Sprintf("seed %d rate %d workers %d", seed, set.rate, set.workers), func(t *testing.T) {
			crashCampaign(t, bin, uint64(seed), set, rows, kills)
		})
	}
}

func crashCampaign(t *testing.T, bin string, seed uint64, set crashSetting, rows, kills int) {
	rng := rand.New(rand.NewPCG(seed, 99))
	sb := sandbox.New(sandbox.Options{AuthToken: "crash-token", HashKey: []byte("crash-key"), Seed: int64(seed),
		Faults: crashFaults})
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
	args := []string{"run", "--rate", strconv.Itoa(set.rate), "--burst", "1", "--workers", strconv.Itoa(set.workers),
		"--unknown-grace", "50ms", "--report-dir", filepath.Join(dir, "reports"), input}

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
	assertCreatedOnce(t, sb, seed, rows)
	st := sb.Stats()
	t.Logf("rows %d, creates %d, duplicates %d; lost answers %d, 5xx %d, 429 %d, most requests in any second across the restarts %d",
		rows, st.Creates, len(sb.Duplicates()), st.Lost, st.ServerErrors, st.RateLimited, st.MaxInAnySecond)
	db, err := ledger.Open(context.Background(), ledgerPath, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	list := ledgertest.Payouts(t, db, ledger.Filter{})
	if len(list) != rows {
		t.Errorf("ledger holds %d payouts, want %d", len(list), rows)
	}
	for _, p := range list {
		if !p.State.Accepted() {
			t.Errorf("%s: state %s after a clean finish", p.Ref, p.State)
		}
	}
}

// assertCreatedOnce checks the sandbox's own count: every row created exactly once, and nothing
// else at all (the campaign's service pays one file).
func assertCreatedOnce(t *testing.T, sb *sandbox.Server, seed uint64, rows int) {
	t.Helper()
	createdOnce(t, sb, fmt.Sprintf("CR%d", seed), rows)
	if len(sb.Duplicates()) > 0 {
		t.Errorf("the service saw duplicates: %v", sb.Duplicates())
	}
	if st := sb.Stats(); st.Creates != rows {
		t.Errorf("the service created %d payouts for %d rows", st.Creates, rows)
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
