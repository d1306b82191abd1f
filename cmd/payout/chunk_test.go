package main_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/payout/payout/ledger"
)

// TestChunkedRunKilledBetweenChunksResumesExactlyOnce pays a file of five chunks, SIGKILLs the
// binary while its first chunks are paid and the last are not yet recorded, and reruns it: every
// row is paid exactly once, and the rerun's reports are what `payout report` writes from the ledger.
func TestChunkedRunKilledBetweenChunksResumesExactlyOnce(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	sb := newSandbox(t)
	u := newUser(t, sb)
	u.env = append(u.env, "PAYOUT_CHUNK_ROWS=40")
	const rows = 200
	var b strings.Builder
	b.WriteString("external_invoice_ref,recipient_reference,bank,third_party_account_no,amount\n")
	for i := 1; i <= rows; i++ {
		fmt.Fprintf(&b, "CHUNK-%04d,Staff %d,Maybank,01%08d7,%d.%02d\n", i, i, i, 100+i, i%100)
	}
	input := filepath.Join(u.dir, "chunked.csv")
	if err := os.WriteFile(input, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binPath, "run", "--report-dir", "first", input)
	cmd.Dir, cmd.Env = u.dir, u.env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// At 60 creates the second chunk is being paid: the last ones are not recorded yet.
	if !waitThenKill(cmd, exited, func() bool { return sb.Stats().Creates >= 60 }) {
		t.Fatal("the run finished before the kill")
	}
	if n := countPayouts(t, u); n >= rows {
		t.Fatalf("the ledger holds %d payouts at the kill: the test did not stop between chunks", n)
	}

	// A create killed before it reached the service leaves a payout whose outcome is unknown: the
	// rerun finds it not found, and sends it again once the grace has passed.
	out, errOut, code := u.run("run", "--report-dir", "rerun", "--json", "--unknown-grace", "50ms", input)
	if code != 0 {
		t.Fatalf("rerun exit %d: %s %s", code, out, errOut)
	}
	runID := regexp.MustCompile(`"run_id":\s*"([^"]+)"`).FindStringSubmatch(out)
	if runID == nil {
		t.Fatalf("no run id in %s", out)
	}
	creates := sb.CreateCounts()
	for i := 1; i <= rows; i++ {
		if n := creates[fmt.Sprintf("CHUNK-%04d", i)]; n != 1 {
			t.Errorf("CHUNK-%04d created %d times, want exactly once", i, n)
		}
	}
	if len(creates) != rows {
		t.Errorf("the service holds %d references, want %d", len(creates), rows)
	}
	if _, errOut, code := u.run("report", "--report-dir", "again", runID[1]); code != 0 {
		t.Fatalf("report exit %d: %s", code, errOut)
	}
	atEnd, fromLedger := onlyFile(t, u, "rerun", ".result.csv"), onlyFile(t, u, "again", ".result.csv")
	if !bytes.Equal(atEnd, fromLedger) {
		t.Errorf("the run's result.csv differs from `payout report`'s:\n%s\n---\n%s", atEnd, fromLedger)
	}
	if got := bytes.Count(atEnd, []byte("\n")); got != rows+1 {
		t.Errorf("the rerun's result.csv has %d lines, want the header and %d rows", got, rows)
	}
}

// countPayouts is how many payouts the user's ledger holds.
func countPayouts(t *testing.T, u *user) int {
	t.Helper()
	db, err := ledger.Open(context.Background(), filepath.Join(u.dir, "payout-ledger.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	totals, err := db.Counts(context.Background(), ledger.CountRead{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range totals.States {
		n += c.Count
	}
	return n
}

// onlyFile is the content of the one file in the user's dir whose name ends with suffix.
func onlyFile(t *testing.T, u *user, dir, suffix string) []byte {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(u.dir, dir, "*"+suffix))
	if err != nil || len(names) != 1 {
		t.Fatalf("%s/*%s: %v %v", dir, suffix, names, err)
	}
	data, err := os.ReadFile(names[0])
	if err != nil {
		t.Fatal(err)
	}
	return data
}
