package main_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/api/sandbox"
)

// TestCommandPoolSizesItselfWithoutWorkers: with neither --workers nor PAYOUT_WORKERS, a run at
// --rate 40 against a service answering in 150 ms (6 requests in flight to keep the rate) grows
// past the 4 workers it starts with; --workers 2 keeps 2 and says once that it cannot keep up.
func TestCommandPoolSizesItselfWithoutWorkers(t *testing.T) {
	t.Parallel()
	sb := sandbox.New(sandbox.Options{AuthToken: "e2e-token", HashKey: []byte("e2e-hash-key"),
		Faults: sandbox.Faults{Latency: 150 * time.Millisecond}})
	t.Cleanup(sb.Close)
	u := newUser(t, sb)
	u.env = slices.DeleteFunc(u.env, func(kv string) bool { return strings.HasPrefix(kv, "PAYOUT_WORKERS=") })
	file := writeRows(t, u.dir, "auto.csv", "AUTO", 40)
	if out, errOut, code := u.run("run", "--rate", "40", file); code != 0 {
		t.Fatalf("run exit %d: %s %s", code, out, errOut)
	} else if strings.Contains(errOut, "raise --workers") {
		t.Errorf("a pool that sizes itself was told to raise --workers: %s", errOut)
	}
	if got := sb.Stats().MaxInFlight; got <= 4 {
		t.Errorf("at most %d requests in flight: the pool did not grow past 4 workers", got)
	}

	file = writeRows(t, u.dir, "two.csv", "TWO", 24)
	_, errOut, code := u.run("run", "--rate", "40", "--workers", "2", file)
	if code != 0 {
		t.Fatalf("run --workers 2 exit %d: %s", code, errOut)
	}
	if n := strings.Count(errOut, "2 workers can send at most"); n != 1 || !strings.Contains(errOut, "--rate is 40/s: raise --workers to") {
		t.Errorf("--workers 2 at --rate 40 and 150 ms: said %d times, want once:\n%s", n, errOut)
	}
}

// writeRows writes a valid payroll CSV of n rows with references under prefix.
func writeRows(t *testing.T, dir, name, prefix string, n int) string {
	t.Helper()
	path := filepath.Join(dir, name)
	writePerfCSV(t, path, prefix, n)
	return path
}
