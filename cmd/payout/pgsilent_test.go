package main_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/api/sandbox"
)

// chainLockKey is the ledger's advisory lock of the chain, which every write transaction takes.
const chainLockKey = 0x7061796f7574

// chainLockStatement is how a ledger writer takes the chain's lock, as it goes over the wire.
var chainLockStatement = fmt.Sprintf("pg_advisory_xact_lock(%d)", chainLockKey)

// TestSilentHostDoesNotStallTheOthersOnPostgres: a host's connections go silent in the middle of
// a write transaction (the network stops forwarding, and closes nothing), so that the server
// holds its session, in a transaction, with the chain's lock every writer of every host needs.
// Another host paying another file must finish all the same, within the server's
// idle_in_transaction_session_timeout (15 s) and a bounded margin, and say in its log what it
// waited for and whose session held it.
func TestSilentHostDoesNotStallTheOthersOnPostgres(t *testing.T) {
	t.Parallel()
	f := newFleet(t, 13, sandbox.Faults{Latency: 5 * time.Millisecond, LatencyJitter: 10 * time.Millisecond})
	silentFile, _ := f.payFile("silent.csv", "SI", 71, 200)
	otherFile, _ := f.payFile("other.csv", "OT", 72, 20)
	proxy, viaProxy := newPGProxy(t, f.url)
	a := exec.Command(binPath, "run", "--rate", "30", "--workers", "2", "--report-dir", filepath.Join(f.dir, "reports"), silentFile)
	a.Dir = f.dir
	for _, kv := range f.env {
		if !strings.HasPrefix(kv, "PAYOUT_LEDGER=") {
			a.Env = append(a.Env, kv)
		}
	}
	a.Env = append(a.Env, "PAYOUT_LEDGER="+viaProxy)
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		proxy.drop()
		_ = a.Process.Kill()
		_ = a.Wait()
	}()
	waitFor(t, time.Minute, "host A to pay a few rows", func() bool { return f.sb.Stats().Creates >= 5 })
	proxy.silenceAfter(chainLockStatement)
	waitFor(t, time.Minute, "host A to go silent holding the chain's lock", proxy.isSilent)

	began := time.Now()
	out, errOut, code := f.run("run", "--rate", "30", "--report-dir", filepath.Join(f.dir, "reports"), otherFile)
	took := time.Since(began)
	if code != 0 {
		t.Fatalf("host B: exit %d, want 0: %s %s", code, out, errOut)
	}
	if limit := 15*time.Second + time.Minute; took > limit {
		t.Errorf("host B took %s, want within the idle-in-transaction timeout and a margin (%s)", took.Round(time.Second), limit)
	}
	if !strings.Contains(errOut, "waiting for the ledger's write lock") || !strings.Contains(errOut, "pid="+strconv.Itoa(a.Process.Pid)) {
		t.Errorf("host B's log does not say it waited for the write lock held by host A (pid %d):\n%s", a.Process.Pid, errOut)
	}
	createdOnce(t, f.sb, "OT", 20)
	t.Logf("host B paid 20 rows in %s while host A's session held the chain's lock, silent", took.Round(time.Millisecond))
}
