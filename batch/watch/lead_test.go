package watch_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/batch/watch"
	"github.com/payout/payout/internal/pgtest"
	"github.com/payout/payout/ledger"
	"github.com/payout/payout/ledger/ledgertest"
)

// leadWatcher is a watcher of root as a process holding hold would run it on its host: its runs
// name the hold's process, and it leads the shared inbox only through the hold.
func leadWatcher(t *testing.T, h *batchtest.Harness, root string, hold ledger.Hold) (*watch.Watcher, *batchtest.LogBuffer) {
	t.Helper()
	cfg := h.Cfg
	cfg.Process, cfg.Liveness, cfg.Files = hold.Self().Claimant(), hold, hold
	inbox, err := filepath.Abs(filepath.Join(root, watch.InboxDir))
	if err != nil {
		t.Fatal(err)
	}
	logs := &batchtest.LogBuffer{}
	w, err := watch.New(watch.Config{Dir: root, Runner: batch.NewRunner(cfg), Ledger: h.DB, Interval: 5 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
		Lead: func(ctx context.Context) (bool, ledger.Process, error) {
			return hold.(ledger.Leader).LeadInbox(ctx, inbox)
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, logs
}

// TestWatchOnTwoHostsTheSecondTakesOverWhenTheLeadersSessionEnds: two watchers of one shared
// folder on one PostgreSQL ledger. The first leads; the second waits, saying who leads, and its
// --once pass exits 0 having done nothing. The leader's session ends (as when its host dies) with a
// file part-paid in processing and a payout it had sent but not recorded; the second then leads,
// resumes that file from the ledger (the payout is looked up and found, not sent again) and pays
// the inbox.
func TestWatchOnTwoHostsTheSecondTakesOverWhenTheLeadersSessionEnds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := batchtest.NewHarness(t, sandbox.Options{})
	url := pgtest.New(t)
	ledgertest.HoldSchema(t, url)
	a, b := takeHold(t, url), takeHold(t, url)
	root := filepath.Join(h.Dir, "shared")
	wa, _ := leadWatcher(t, h, root, a)
	wb, logsB := leadWatcher(t, h, root, b)
	if exit, err := wa.Poll(ctx); err != nil || exit != exitcode.OK {
		t.Fatalf("leader's first pass: %d, %v", exit, err)
	}

	// The leader's run of a file, stopped part-way, and one payout it sent but never recorded.
	rows := batchtest.Payroll(6, "TAKEOVER")
	path := filepath.Join(root, watch.ProcessingDir, "payroll.csv")
	watchPut(t, path, watchCSV(rows))
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	half := h.Run(stop, path, func(c *batch.Config) {
		c.Process, c.Liveness, c.Files = a.Self().Claimant(), a, a
		c.Workers, c.Progress = 1, func(done, _ int) {
			if done >= 2 {
				cancel()
			}
		}
	})
	if half.ExitCode != exitcode.Aborted {
		t.Fatalf("the leader's run: %+v, want stopped part-way", half)
	}
	sent := sendUnrecorded(t, h, a)
	later := batchtest.Payroll(2, "LATER")
	watchPut(t, filepath.Join(root, watch.InboxDir, "later.csv"), watchCSV(later))

	exit, err := wb.Once(ctx)
	want := fmt.Sprintf("leader_pid=%d", a.Self().PID)
	if err != nil || exit != exitcode.OK || !strings.Contains(logsB.String(), want) || !strings.Contains(logsB.String(), "leader_host="+a.Self().Host) {
		t.Fatalf("the second watcher's pass while the leader runs: %d, %v; want 0 and its logs naming %q:\n%s", exit, err, want, logsB)
	}
	if got := len(h.Sandbox.CreateCounts()); got > len(rows) {
		t.Fatalf("the waiting watcher sent something: %d creates", got)
	}
	if n := strings.Count(logsB.String(), "another process leads"); n != 1 {
		t.Errorf("who leads logged %d times, want once", n)
	}

	endSession(t, url, a)
	if _, err := wa.Poll(ctx); err == nil {
		t.Errorf("the old leader's pass after its session ended: no error, want it stopped")
	}
	worst, err := wb.Once(ctx)
	if err != nil || worst != exitcode.OK {
		t.Fatalf("the new leader's pass: %d, %v\n%s", worst, err, logsB)
	}
	if got := strings.Join(dirNames(t, filepath.Join(root, watch.DoneDir)), ","); got != "later.csv,payroll.csv" {
		t.Errorf("done holds %q, want both files", got)
	}
	counts := h.Sandbox.CreateCounts()
	for _, row := range append(rows, later...) {
		if counts[row.Ref] != 1 {
			t.Errorf("%s created %d times, want once", row.Ref, counts[row.Ref])
		}
	}
	if p, err := h.DB.Get(ctx, sent); err != nil || p.ClaimedBy != a.Self().Claimant() {
		t.Errorf("the payout the old leader sent: %+v, %v; want found under its claim, not sent again", p, err)
	}
}

func takeHold(t *testing.T, url string) ledger.Hold {
	t.Helper()
	h, err := ledger.Take(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// sendUnrecorded claims a READY payout for hold's process and creates it at the service, as a
// process that died before it recorded the answer leaves it; it returns its reference.
func sendUnrecorded(t *testing.T, h *batchtest.Harness, hold ledger.Hold) string {
	t.Helper()
	ctx := context.Background()
	ready := ledgertest.Payouts(t, h.DB, ledger.Filter{States: []ledger.State{ledger.Ready}})
	if len(ready) == 0 {
		t.Fatal("no READY payout left by the stopped run")
	}
	p := ready[0]
	if err := h.DB.Apply(ctx, ledger.Change{Ref: p.Ref, From: ledger.Ready, To: ledger.Submitting, ClaimedBy: hold.Self().Claimant(),
		Detail: "test: sent by the leader, which died before the answer"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Client.CreatePayout(ctx, api.CreatePayoutRequest{VirtualPoolReference: h.Cfg.VirtualPoolRef,
		PayoutServiceID: p.ProviderID, Amount: p.Amount, ClientRedirectURL: h.Cfg.RedirectURL, ClientCallbackURL: h.Cfg.CallbackURL,
		ThirdPartyAccountNo: p.Account, RecipientReference: p.Recipient, PaymentDescription: p.Description, ExternalInvoiceRef: p.Ref}); err != nil {
		t.Fatal(err)
	}
	return p.Ref
}

// endSession ends hold's session on the server, as the server does when its host stops
// answering, and waits until the server has.
func endSession(t *testing.T, url string, hold ledger.Hold) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.Admin(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	db, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	var backend int32
	if err := db.QueryRow(ctx, "SELECT backend_pid FROM processes WHERE id = $1", hold.Self().ID).Scan(&backend); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_terminate_backend($1, 60000)", backend); err != nil {
		t.Fatal(err)
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
