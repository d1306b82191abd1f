package main_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/watch"
	"github.com/payout/payout/internal/pgtest"
	"github.com/payout/payout/ledger"
)

// newPostgresUser is a user whose $PAYOUT_LEDGER is a new PostgreSQL ledger.
func newPostgresUser(t *testing.T) (*user, string) {
	t.Helper()
	url := pgtest.New(t)
	db, err := ledger.Create(context.Background(), url, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	u := newUserWithoutLedger(t, newSandbox(t))
	u.env = append(u.env, "PAYOUT_LEDGER="+url)
	return u, url
}

// holdAsAnotherHost takes a hold on the ledger at url as another process would.
func holdAsAnotherHost(t *testing.T, url string) ledger.Hold {
	t.Helper()
	h, err := ledger.Take(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// TestCommandRunOfAFileAnotherProcessPaysOnPostgres: while another process pays a file, `payout
// run` of it exits 1 naming that process's host and pid, having sent nothing; once it ended, the
// run pays the file.
func TestCommandRunOfAFileAnotherProcessPaysOnPostgres(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	u, url := newPostgresUser(t)
	sample := samplePath(t)
	sum, err := read.FileSHA256(sample)
	if err != nil {
		t.Fatal(err)
	}
	other := holdAsAnotherHost(t, url)
	if err := other.PayFile(context.Background(), sum); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := u.run("run", sample)
	want := fmt.Sprintf("pid=%d host=%s ", other.Self().PID, other.Self().Host)
	if code != 1 || !strings.Contains(errOut, want) {
		t.Fatalf("run of a file another process pays: exit %d, stderr %q; want 1 naming %q", code, errOut, want)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := u.run("run", sample); code != 0 {
		t.Errorf("run once the other process ended: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestCommandWatchOnceOnAHostThatDoesNotLead: `payout watch --once` on a host whose inbox another
// process leads exits 0, leaving the inbox to the leader, and says (-v) who leads.
func TestCommandWatchOnceOnAHostThatDoesNotLead(t *testing.T) {
	t.Parallel()
	u, url := newPostgresUser(t)
	dir := filepath.Join(u.dir, "shared")
	inbox := filepath.Join(dir, watch.InboxDir)
	if err := os.MkdirAll(inbox, 0o750); err != nil {
		t.Fatal(err)
	}
	sample, err := os.ReadFile(samplePath(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(inbox, "payroll.csv"), sample, 0o600); err != nil {
		t.Fatal(err)
	}
	leader := holdAsAnotherHost(t, url)
	if ok, _, err := leader.(ledger.Leader).LeadInbox(context.Background(), inbox); err != nil || !ok {
		t.Fatalf("lead: %v %v", ok, err)
	}
	_, errOut, code := u.run("watch", "--once", "-v", "--settle", "0", dir)
	want := fmt.Sprintf("leader_pid=%d", leader.Self().PID)
	if code != 0 || !strings.Contains(errOut, want) {
		t.Fatalf("watch --once on a host that does not lead: exit %d, stderr %q; want 0 naming %q", code, errOut, want)
	}
	if _, err := os.Stat(filepath.Join(inbox, "payroll.csv")); err != nil {
		t.Errorf("the inbox file was taken by a watcher that does not lead: %v", err)
	}
}
