package ledger_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payout/payout/internal/pgtest"
	"github.com/payout/payout/ledger"
	"github.com/payout/payout/ledger/ledgertest"
)

// pgHolderEnv makes the test binary a process holding a PostgreSQL ledger (see TestMain): it
// takes the hold, pays the file whose SHA-256 pgHolderFileEnv names, prints its claimant and
// waits to be killed.
const (
	pgHolderEnv     = "LEDGER_TEST_PG_HOLDER"
	pgHolderFileEnv = "LEDGER_TEST_PG_HOLDER_FILE"
)

func runPgHolder(url string) {
	ctx := context.Background()
	h, err := ledger.Take(ctx, url)
	if err == nil {
		err = h.PayFile(ctx, os.Getenv(pgHolderFileEnv))
	}
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("held", h.Self().Claimant())
	select {} // hold it until killed
}

// pgLedger is a database with the registry of processes, as a hold needs it.
func pgLedger(t *testing.T) string {
	t.Helper()
	url := pgtest.New(t)
	ledgertest.HoldSchema(t, url)
	return url
}

func take(t *testing.T, url string) ledger.Hold {
	t.Helper()
	h, err := ledger.Take(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// until polls cond until it holds or the deadline passes: a wait for a condition, never a
// measure of time.
func until(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still not so after 60 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func queryInt(t *testing.T, url, q string, args ...any) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPgHoldAliveWhileItsProcessRunsAndGoneOnceKilled(t *testing.T) {
	t.Parallel()
	url := pgLedger(t)
	const sum = "aaaa000000000000000000000000000000000000000000000000000000000001"
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), pgHolderEnv+"="+url, pgHolderFileEnv+"="+sum)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	child, ok := strings.CutPrefix(strings.TrimSpace(line), "held ")
	if err != nil || !ok {
		t.Fatalf("child: %q, %v", line, err)
	}
	ctx := context.Background()
	h := take(t, url)
	if alive, err := h.Alive(ctx, child); err != nil || !alive {
		t.Fatalf("Alive(child) = %v, %v while it runs, want alive", alive, err)
	}
	err = h.PayFile(ctx, sum)
	if want := fmt.Sprintf("pid=%d host=", cmd.Process.Pid); !errors.Is(err, ledger.ErrLocked) ||
		!strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), sum) {
		t.Fatalf("PayFile of the child's file: %v, want ErrLocked naming %q and the file", err, want)
	}

	backend := queryInt(t, url, "SELECT backend_pid FROM processes WHERE claimant = $1", child)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	admin := pgtest.Admin(t)
	until(t, "the server ends the killed process's session", func() (bool, error) {
		return queryInt(t, admin, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", backend) == 0, nil
	})
	until(t, "Alive says the killed process is gone", func() (bool, error) {
		alive, err := h.Alive(ctx, child)
		return !alive, err
	})
	if err := h.PayFile(ctx, sum); err != nil {
		t.Fatalf("PayFile once the child is gone: %v", err)
	}
	// The killed process's row stays until the next hold sweeps it.
	take(t, url)
	if n := queryInt(t, url, "SELECT count(*) FROM processes WHERE claimant = $1", child); n != 0 {
		t.Errorf("the killed process is still registered after a new hold: %d rows", n)
	}
}

func TestPgHoldsPayingOneFileAndTwoFiles(t *testing.T) {
	t.Parallel()
	url := pgLedger(t)
	ctx := context.Background()
	a, b := take(t, url), take(t, url)
	const one, two = "11aa", "22bb"
	if err := a.PayFile(ctx, one); err != nil {
		t.Fatal(err)
	}
	if err := a.PayFile(ctx, one); err != nil {
		t.Fatalf("the holder paying its file again: %v", err)
	}
	err := b.PayFile(ctx, one)
	want := fmt.Sprintf("(SHA-256 %s): pid=%d host=%s ", one, a.Self().PID, a.Self().Host)
	if !errors.Is(err, ledger.ErrLocked) || !strings.Contains(err.Error(), want) {
		t.Fatalf("second process paying the same file: %v, want ErrLocked naming %q", err, want)
	}
	if err := b.PayFile(ctx, two); err != nil {
		t.Fatalf("second process paying another file: %v", err)
	}
	for _, c := range []struct {
		h    ledger.Hold
		file string
		want bool
	}{{a, one, false}, {b, one, true}, {a, two, true}, {a, "99ff", false}} {
		if got, err := c.h.OthersPay(ctx, c.file); err != nil || got != c.want {
			t.Errorf("%s: OthersPay(%s) = %v, %v; want %v", c.h.Self().Claimant(), c.file, got, err, c.want)
		}
	}
	if n := queryInt(t, url, "SELECT count(*) FROM processes WHERE $1 = ANY(paying) AND id = $2", two, b.Self().ID); n != 1 {
		t.Errorf("the registry does not record that b pays %s", two)
	}
	// a took its file twice (two runs): the first run's end leaves it held, the second's frees it.
	for i, wantFree := range []bool{false, true} {
		if err := a.DonePaying(ctx, one); err != nil {
			t.Fatal(err)
		}
		err := b.PayFile(ctx, one)
		if free := err == nil; free != wantFree {
			t.Errorf("after a's run %d of %s ended: b's PayFile %v, want free %v", i+1, one, err, wantFree)
		}
	}
	for _, h := range []ledger.Hold{a, b} {
		for _, other := range []ledger.Hold{a, b} {
			if alive, err := h.Alive(ctx, other.Self().Claimant()); err != nil || !alive {
				t.Errorf("Alive(%s) = %v, %v, want alive", other.Self().Claimant(), alive, err)
			}
		}
	}
}

func TestPgHoldCloseReleasesEverything(t *testing.T) {
	t.Parallel()
	url := pgLedger(t)
	ctx := context.Background()
	a, b := take(t, url), take(t, url)
	const sum = "33cc"
	if err := a.PayFile(ctx, sum); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := b.PayFile(ctx, sum); err != nil {
		t.Errorf("PayFile once its holder closed: %v", err)
	}
	if alive, err := b.Alive(ctx, a.Self().Claimant()); err != nil || alive {
		t.Errorf("Alive(closed) = %v, %v, want gone", alive, err)
	}
	if n := queryInt(t, url, "SELECT count(*) FROM processes WHERE id = $1", a.Self().ID); n != 0 {
		t.Errorf("a closed hold is still registered")
	}
}

func TestPgHoldCannotTellOfForeignClaimantsAndCallsThemAlive(t *testing.T) {
	t.Parallel()
	h := take(t, pgLedger(t))
	for _, c := range []string{"", "someone", "pid=1 host=x", "host=h pid=1 started=2026-01-02T03:04:05Z id=nothex!!nothex!"} {
		if alive, err := h.Alive(context.Background(), c); err != nil || !alive {
			t.Errorf("Alive(%q) = %v, %v, want alive (its rows left alone)", c, alive, err)
		}
	}
}

func TestPgHoldLeadsAnInboxAloneUntilItsLeaderCloses(t *testing.T) {
	t.Parallel()
	url := pgLedger(t)
	ctx := context.Background()
	a, b := take(t, url), take(t, url)
	la, lb := a.(ledger.Leader), b.(ledger.Leader)
	const inbox = "/srv/payroll/inbox"
	if ok, _, err := la.LeadInbox(ctx, inbox); err != nil || !ok {
		t.Fatalf("first: %v %v", ok, err)
	}
	ok, leader, err := lb.LeadInbox(ctx, inbox)
	if err != nil || ok || leader.PID != a.Self().PID || leader.Host != a.Self().Host {
		t.Fatalf("second: leads %v, leader %+v, %v; want a's", ok, leader, err)
	}
	if ok, _, err := lb.LeadInbox(ctx, "/srv/other/inbox"); err != nil || !ok {
		t.Errorf("another inbox: %v %v", ok, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := lb.LeadInbox(ctx, inbox); err != nil || !ok {
		t.Errorf("once the leader closed: %v %v", ok, err)
	}
}

func TestPgHoldWithoutRegistryOrServerSaysWhatToDoAndHidesThePassword(t *testing.T) {
	t.Parallel()
	url := pgtest.New(t) // no processes table
	withPassword := strings.Replace(url, "postgres@", "postgres:s3cret@", 1)
	_, err := ledger.Take(context.Background(), withPassword)
	if err == nil || !strings.Contains(err.Error(), "payout init") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Take without the processes table: %v; want it to say payout init, without the password", err)
	}
	_, err = ledger.Take(context.Background(), "postgres://u:s3cret@127.0.0.1:1/x?sslmode=disable&connect_timeout=5")
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "127.0.0.1:1/x") {
		t.Errorf("Take of no server: %v; want the server named, without the password", err)
	}
}

func TestPgHoldSessionNoticesADeadPeerInSeconds(t *testing.T) {
	t.Parallel()
	h := take(t, pgLedger(t))
	for name, want := range map[string]string{"tcp_keepalives_idle": "5", "tcp_keepalives_interval": "5",
		"tcp_keepalives_count": "3", "tcp_user_timeout": "20000", "client_connection_check_interval": "2s"} {
		got, err := ledger.SessionSetting(context.Background(), h, name)
		if err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
}

// TestPgHoldThatLostItsSessionSaysSoAndHoldsNothing: the server ends a hold's session (as when
// it gives up on its host): the hold says it is lost, and no longer claims the file it held.
func TestPgHoldThatLostItsSessionSaysSoAndHoldsNothing(t *testing.T) {
	t.Parallel() // long, on a ledger of its own: beside the other long ones
	url := pgLedger(t)
	ctx := context.Background()
	h := take(t, url)
	if err := h.PayFile(ctx, "44dd"); err != nil {
		t.Fatal(err)
	}
	backend := queryInt(t, url, "SELECT backend_pid FROM processes WHERE id = $1", h.Self().ID)
	if n := queryInt(t, pgtest.Admin(t), "SELECT count(*) FROM (SELECT pg_terminate_backend($1, 60000)) t", backend); n != 1 {
		t.Fatal("no session terminated")
	}
	select {
	case <-h.(interface{ Lost() <-chan struct{} }).Lost():
	case <-time.After(60 * time.Second):
		t.Fatal("the hold did not notice its session ended within 60 s")
	}
	if err := h.PayFile(ctx, "44dd"); err == nil {
		t.Error("PayFile of its file after the session ended: no error")
	}
	if err := take(t, url).PayFile(ctx, "44dd"); err != nil {
		t.Errorf("another process paying the file: %v", err)
	}
}

// TestPgHoldAsTheConformanceSuitesHolder: the holder the suite gets for a PostgreSQL ledger is
// alive to another until released.
func TestPgHoldAsTheConformanceSuitesHolder(t *testing.T) {
	t.Parallel()
	url := pgLedger(t)
	first, _ := ledgertest.TakeHold(t, url)
	second, _ := ledgertest.TakeHold(t, url)
	if alive, err := second.Alive.Alive(context.Background(), first.Claimant); err != nil || !alive {
		t.Fatalf("before release: %v, %v", alive, err)
	}
	first.Release()
	if alive, err := second.Alive.Alive(context.Background(), first.Claimant); err != nil || alive {
		t.Errorf("after release: %v, %v; want gone", alive, err)
	}
}
