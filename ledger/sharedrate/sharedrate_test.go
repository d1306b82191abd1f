package sharedrate_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver of database/sql
	"golang.org/x/time/rate"

	"github.com/payout/payout/internal/pgtest"
	"github.com/payout/payout/ledger/sharedrate"
)

// limiterDatabase is the URL of a database of tb's own with the rate_limits table.
func limiterDatabase(tb testing.TB) string {
	tb.Helper()
	url := pgtest.New(tb)
	schema, err := os.ReadFile("../migrations/postgres/0003_rate_limits.sql")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := openPG(tb, url).Exec(string(schema)); err != nil {
		tb.Fatalf("apply 0003_rate_limits.sql: %v", err)
	}
	return url
}

// openPG is a handle on url with a pool of connections of its own, as each process has.
func openPG(tb testing.TB, url string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func sharedLimiter(tb testing.TB, db *sql.DB, merchant string, limit rate.Limit, burst int) *sharedrate.Limiter {
	tb.Helper()
	l, err := sharedrate.New(db, merchant, limit, burst)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// checkPaced says whether grants, times on the database server's clock, hold the rate: any
// burst+1 of them in a row span at least one interval (GCRA lets at most burst + W/interval go
// in any W). The server keeps times to the microsecond, so a grant given exactly when it was due
// may read up to a microsecond early.
func checkPaced(t *testing.T, grants []time.Time, interval time.Duration, burst int) {
	t.Helper()
	slices.SortFunc(grants, func(a, b time.Time) int { return a.Compare(b) })
	for i := 0; i+burst < len(grants); i++ {
		if span := grants[i+burst].Sub(grants[i]); span+time.Microsecond < interval {
			t.Errorf("grants %d to %d (%s to %s) span %s: %d requests within %s, more than the burst of %d",
				i, i+burst, grants[i].Format(time.RFC3339Nano), grants[i+burst].Format(time.RFC3339Nano), span, burst+1, interval, burst)
		}
	}
	if n := len(grants); n > burst {
		if span, least := grants[n-1].Sub(grants[0]), time.Duration(n-burst)*interval; span+time.Microsecond < least {
			t.Errorf("%d grants span %s, want at least %s", n, span, least)
		}
	}
}

// TestLimiterPacesEveryConnection: limiters on three handles, two workers each, all of one
// merchant, get grants from the server that hold the merchant's rate after the burst, whatever
// the connection.
func TestLimiterPacesEveryConnection(t *testing.T) {
	t.Parallel()
	url := limiterDatabase(t)
	const limit, burst, each = 100, 3, 6
	merchant := sharedrate.Key("https://payouts.example/", "token-1")
	var (
		mu     sync.Mutex
		grants []time.Time
		wg     sync.WaitGroup
	)
	for range 3 {
		l := sharedLimiter(t, openPG(t, url), merchant, limit, burst)
		for range 2 {
			wg.Go(func() {
				for range each {
					g, err := l.WaitGrant(context.Background())
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					grants = append(grants, g)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if len(grants) != 3*2*each {
		t.Fatalf("%d grants, want %d", len(grants), 3*2*each)
	}
	checkPaced(t, grants, 10*time.Millisecond, burst)
}

// childEnv makes TestLimiterPacesEveryProcess's test binary one of the processes it
// starts: the database's URL.
const childEnv = "SHAREDRATE_TEST_LIMITER_URL"

// TestLimiterPacesEveryProcess: three processes (this test binary again) pacing one
// merchant at once, each with a limiter of its own, get grants that together hold the rate.
func TestLimiterPacesEveryProcess(t *testing.T) {
	t.Parallel()
	const limit, burst, each = 50, 2, 10
	merchant := sharedrate.Key("https://payouts.example", "token-2")
	if url := os.Getenv(childEnv); url != "" {
		limiterChild(t, url, merchant, limit, burst, each)
		return
	}
	url := limiterDatabase(t)
	var children []*limiterProcess
	for range 3 {
		children = append(children, startLimiterChild(t, url))
	}
	for _, c := range children { // every one is ready: they pace at the same time
		if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
			t.Fatal(err)
		}
	}
	var grants []time.Time
	for _, c := range children {
		grants = append(grants, c.grants(t)...)
	}
	if len(grants) != 3*each {
		t.Fatalf("%d grants, want %d", len(grants), 3*each)
	}
	checkPaced(t, grants, 20*time.Millisecond, burst)
}

// limiterChild is the child's side: ready, then each Waits once "go" comes, each grant a line.
func limiterChild(t *testing.T, url, merchant string, limit rate.Limit, burst, each int) {
	l := sharedLimiter(t, openPG(t, url), merchant, limit, burst)
	fmt.Println("ready")
	if line, err := bufio.NewReader(os.Stdin).ReadString('\n'); line != "go\n" {
		t.Fatalf("told %q, %v", line, err)
	}
	for range each {
		g, err := l.WaitGrant(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println("grant", g.UTC().Format(time.RFC3339Nano))
	}
}

type limiterProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

func startLimiterChild(t *testing.T, url string) *limiterProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLimiterPacesEveryProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+url)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	c := &limiterProcess{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	if line, err := c.out.ReadString('\n'); line != "ready\n" {
		t.Fatalf("child said %q, %v", line, err)
	}
	return c
}

// grants are the times the child was granted, read until it ends.
func (c *limiterProcess) grants(t *testing.T) []time.Time {
	t.Helper()
	var grants []time.Time
	var said []string
	for {
		line, err := c.out.ReadString('\n')
		if g, ok := strings.CutPrefix(strings.TrimSpace(line), "grant "); ok {
			at, perr := time.Parse(time.RFC3339Nano, g)
			if perr != nil {
				t.Fatal(perr)
			}
			grants = append(grants, at)
		} else if line != "" {
			said = append(said, line)
		}
		if err != nil {
			break
		}
	}
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("child: %v: %s", err, strings.Join(said, ""))
	}
	return grants
}

// TestLimiterPauseHoldsEveryProcess: a 429's pause written by one process's limiter holds
// another's next grant until the pause's end, on the server's clock; a shorter pause after it
// does not shorten it.
func TestLimiterPauseHoldsEveryProcess(t *testing.T) {
	t.Parallel()
	url := limiterDatabase(t)
	merchant := sharedrate.Key("https://payouts.example", "token-3")
	dbA, dbB := openPG(t, url), openPG(t, url)
	a, b := sharedLimiter(t, dbA, merchant, 100, 5), sharedLimiter(t, dbB, merchant, 100, 5)
	ctx := context.Background()
	if _, err := b.WaitGrant(ctx); err != nil {
		t.Fatal(err)
	}
	var before time.Time
	if err := dbA.QueryRow(`SELECT statement_timestamp()`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	const d = 300 * time.Millisecond
	if err := a.Pause(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := a.Pause(ctx, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	var until time.Time
	if err := dbA.QueryRow(`SELECT pause_until FROM rate_limits WHERE merchant = $1`, merchant).Scan(&until); err != nil {
		t.Fatal(err)
	}
	if until.Sub(before) < d {
		t.Fatalf("paused until %s, want at least %s after %s", until, d, before)
	}
	g, err := b.WaitGrant(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g.Before(until) {
		t.Errorf("the other limiter was granted at %s, before the pause's end %s", g, until)
	}
}

// TestLimiterStopsWaitingWhenCancelled: a Wait whose turn is an hour away returns the
// context's error as soon as the context ends, and one whose deadline comes first says so at once.
func TestLimiterStopsWaitingWhenCancelled(t *testing.T) {
	t.Parallel()
	url := limiterDatabase(t)
	l := sharedLimiter(t, openPG(t, url), sharedrate.Key("https://payouts.example", "token-4"), rate.Every(time.Hour), 1)
	if err := l.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	short, cancelShort := context.WithTimeout(context.Background(), time.Minute)
	defer cancelShort()
	if err := l.Wait(short); err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("with a minute to wait an hour: %v, want the deadline named", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- l.Wait(ctx) }()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}

// TestLimiterStopsWhenTheDatabaseIsUnreachable: no answer from the database is an error,
// never a request let go unpaced, and says what to do.
func TestLimiterStopsWhenTheDatabaseIsUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there any more
	db := openPG(t, "postgres://payout@"+addr+"/ledger?sslmode=disable")
	l := sharedLimiter(t, db, sharedrate.Key("https://payouts.example", "token-5"), 10, 1)
	err = l.Wait(context.Background())
	if err == nil || errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "run again") {
		t.Errorf("Wait on an unreachable database: %v, want its error saying to run again", err)
	}
	if err := l.Pause(context.Background(), time.Second); err == nil {
		t.Error("Pause on an unreachable database: no error")
	}
}

// TestRateLimitKeyIsTheMerchants: two hosts configured for one merchant share a key whatever a
// trailing slash or the host's case; another token or service is another key; the key does not
// hold the token.
func TestRateLimitKeyIsTheMerchants(t *testing.T) {
	t.Parallel()
	const token = "s3cr3t-merchant-token"
	k := sharedrate.Key("https://Payouts.Example/api/", token)
	if same := sharedrate.Key("https://payouts.example/api", token); same != k {
		t.Errorf("one merchant written two ways: keys %s and %s", k, same)
	}
	for _, other := range []string{sharedrate.Key("https://payouts.example/api", "another-token"),
		sharedrate.Key("https://sandbox.payouts.example/api", token)} {
		if other == k {
			t.Errorf("another merchant or service has the key %s", k)
		}
	}
	if len(k) != 64 || strings.Contains(k, token) {
		t.Errorf("key %q: want 64 hex digits, without the token", k)
	}
}

// TestLimiterCancelledWhileTheRowIsLocked: a Wait whose statement waits for the merchant's
// row (held here by another transaction, as a stuck process might) returns the context's error
// once the context ends, without waiting for the row.
func TestLimiterCancelledWhileTheRowIsLocked(t *testing.T) {
	t.Parallel()
	url := limiterDatabase(t)
	merchant := sharedrate.Key("https://payouts.example", "token-6")
	db := openPG(t, url)
	l := sharedLimiter(t, db, merchant, rate.Inf, 1)
	if err := l.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	holder := openPG(t, url)
	tx, err := holder.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`SELECT 1 FROM rate_limits WHERE merchant = $1 FOR UPDATE`, merchant); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- l.Wait(ctx) }()
	// Until the Wait's statement is seen waiting for the lock: polled, not timed.
	for {
		var n int
		if err := holder.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO rate_limits%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		select {
		case err := <-errc:
			t.Fatalf("the Wait returned %v while the row was locked", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	start := time.Now()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled while the row is locked: %v, want context.Canceled", err)
	}
	t.Logf("returned %s after the cancel", time.Since(start))
}

// TestLimiterDBDoesNotWaitForTheDisk: the limiter's handle commits without waiting for the flush
// (every Wait writes one row, locked until its commit is done); the ledger's own handle waits.
// The tests' cluster never waits: this one keeps the server's default.
func TestLimiterDBDoesNotWaitForTheDisk(t *testing.T) {
	t.Parallel()
	url := pgtest.Durable(t)
	db, err := sharedrate.OpenDB(url, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range []struct {
		db   *sql.DB
		want string
	}{{db, "off"}, {openPG(t, url), "on"}} {
		var got string
		if err := c.db.QueryRow("SHOW synchronous_commit").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("synchronous_commit = %s, want %s", got, c.want)
		}
	}
}
