package main_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver of database/sql, to read the registry
	"github.com/shopspring/decimal"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/internal/pgtest"
	"github.com/payout/payout/ledger"
	"github.com/payout/payout/ledger/ledgertest"
)

// fleet is processes of the built binary on several "hosts" (here, processes of one machine)
// that share one PostgreSQL ledger and pay one merchant at one service, as cron runs them.
type fleet struct {
	t   *testing.T
	sb  *sandbox.Server
	url string
	dir string
	env []string
	db  *sql.DB // the test's own look at the ledger's registry of processes

	mu       sync.Mutex
	arrivals []arrival // every API request, as it reached the service
}

// arrival is an API request as the service's front end saw it come.
type arrival struct {
	at   time.Time
	what string // method and path
}

// newFleet is a sandbox with faults, a new PostgreSQL ledger made by `payout init`, and the
// environment every process of the fleet runs with.
func newFleet(t *testing.T, seed int64, faults sandbox.Faults) *fleet {
	t.Helper()
	sb := sandbox.New(sandbox.Options{AuthToken: "fleet-token", HashKey: []byte("fleet-hash-key"), Seed: seed, Faults: faults})
	f := &fleet{t: t, sb: sb}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, sandbox.PathPrefix) {
			f.mu.Lock()
			f.arrivals = append(f.arrivals, arrival{time.Now(), r.Method + " " + strings.TrimPrefix(r.URL.Path, sandbox.PathPrefix)})
			f.mu.Unlock()
		}
		sb.ServeHTTP(w, r)
	}))
	t.Cleanup(sb.Close)
	t.Cleanup(ts.Close)
	url := pgtest.New(t)
	dir := t.TempDir()
	f.url, f.dir = url, dir
	f.env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir,
		"PAYOUT_BASE_URL=" + ts.URL, "PAYOUT_AUTH_TOKEN=fleet-token", "PAYOUT_VIRTUAL_POOL_REF=POOL",
		"PAYOUT_CALLBACK_URL=http://127.0.0.1:1/cb", "PAYOUT_REDIRECT_URL=http://127.0.0.1:1/r",
		"PAYOUT_LEDGER=" + url,
	}
	if out, errOut, code := f.run("init"); code != 0 {
		t.Fatalf("init: exit %d: %s %s", code, out, errOut)
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	f.db = db
	return f
}

// run runs one command of the fleet to its end: stdout, stderr, exit code.
func (f *fleet) run(args ...string) (string, string, int) {
	f.t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir, cmd.Env = f.dir, f.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return stdout.String(), stderr.String(), exit.ExitCode()
	} else if err != nil {
		f.t.Fatalf("payout %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), 0
}

// payFile writes a file of rows payouts whose references start with prefix (prefix-00001...), to
// accounts of their own series (files of different series pay different people), and returns
// its path and its total.
func (f *fleet) payFile(name, prefix string, series, rows int) (string, decimal.Decimal) {
	f.t.Helper()
	var b strings.Builder
	total := decimal.Zero
	b.WriteString("external_invoice_ref,recipient_reference,bank,third_party_account_no,amount\n")
	for i := 1; i <= rows; i++ {
		amount := decimal.New(int64(100+i)*100+int64(i%100), -2)
		total = total.Add(amount)
		fmt.Fprintf(&b, "%s-%05d,Staff %d,Maybank,%02d%08d7,%s\n", prefix, i, i, series, i, amount.StringFixed(2))
	}
	path := filepath.Join(f.dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		f.t.Fatal(err)
	}
	return path, total
}

// holderPID is the pid of the process the registry says pays the file now, or 0.
func (f *fleet) holderPID(file string) int {
	f.t.Helper()
	sum, err := read.FileSHA256(file)
	if err != nil {
		f.t.Fatal(err)
	}
	var pid int
	err = f.db.QueryRow(`SELECT pid FROM processes p WHERE $1 = ANY(paying) AND EXISTS
		(SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.pid = p.backend_pid)
		ORDER BY started DESC LIMIT 1`, sum).Scan(&pid)
	if errors.Is(err, sql.ErrNoRows) {
		return 0
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return pid
}

// cronLoop is one host's cron job on a file: `payout run` again and again, a short pause
// between attempts, until one exits 0 or the host is killed for good.
type cronLoop struct {
	name string
	args []string
	f    *fleet

	mu       sync.Mutex
	cmd      *exec.Cmd // the attempt running now
	gone     bool      // killed for good: never started again
	kills    int
	attempts int
	lockedBy int          // exits 1 kept off the file by the process paying it
	named    map[int]bool // the pids those exits named
	killed   []int        // the pids the test killed
	others   []string     // other exits, for the log
	out      string       // stdout of the run that exited 0
	done     chan struct{}
}

func (f *fleet) cron(name string, args ...string) *cronLoop {
	return &cronLoop{name: name, args: args, f: f, done: make(chan struct{}), named: map[int]bool{}}
}

// holderNamed finds the process a run kept off a file names: its pid and host.
var holderNamed = regexp.MustCompile(`pid=(\d+) host=\S+`)

// start runs the loop until an attempt exits 0, the host is gone, or ctx ends.
func (c *cronLoop) start(ctx context.Context) {
	go func() {
		defer close(c.done)
		for ctx.Err() == nil {
			cmd := exec.Command(binPath, c.args...)
			cmd.Dir, cmd.Env = c.f.dir, c.f.env
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			c.mu.Lock()
			if c.gone {
				c.mu.Unlock()
				return
			}
			if err := cmd.Start(); err != nil {
				c.others = append(c.others, err.Error())
				c.mu.Unlock()
				return
			}
			c.cmd = cmd
			c.attempts++
			c.mu.Unlock()
			err := cmd.Wait()
			c.mu.Lock()
			c.cmd = nil
			var exit *exec.ExitError
			switch {
			case err == nil:
				c.out = stdout.String()
				c.mu.Unlock()
				return
			case errors.As(err, &exit) && exit.ExitCode() == 1 && strings.Contains(stderr.String(), "another process is paying this file"):
				// Kept off by the holder: named, unless it had only just taken or let go of the file.
				c.lockedBy++
				if m := holderNamed.FindStringSubmatch(stderr.String()); m != nil {
					pid, _ := strconv.Atoi(m[1])
					c.named[pid] = true
				}
			case errors.As(err, &exit) && exit.ExitCode() == -1:
				// killed by the test
			case errors.As(err, &exit) && exit.ExitCode() == 4:
				// finished with rows to see to: cron runs it again
				c.others = append(c.others, fmt.Sprintf("%v: %s", err, lastLine(stderr.String())))
			default:
				// nothing a rerun would change: the test reads why
				c.others = append(c.others, fmt.Sprintf("%v: %s %s", err, lastLine(stdout.String()), lastLine(stderr.String())))
				c.mu.Unlock()
				return
			}
			c.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(150 * time.Millisecond):
			}
		}
	}()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// killIfPID SIGKILLs the loop's attempt if its pid is pid; forGood keeps the host from running
// again. It reports whether it killed.
func (c *cronLoop) killIfPID(pid int, forGood bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil || c.cmd.Process.Pid != pid {
		return false
	}
	c.gone = c.gone || forGood
	c.kills++
	c.killed = append(c.killed, pid)
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	return true
}

// finished reports whether the loop ended.
func (c *cronLoop) finished() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *cronLoop) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("%s: %d attempts, %d kept off by the holder, %d killed, other exits %v",
		c.name, c.attempts, c.lockedBy, c.kills, c.others)
}

// killHolder waits until ready() and then SIGKILLs whichever of loops holds the file (the
// registry's pid). It returns the loop it killed, or nil when every loop ended first.
func (f *fleet) killHolder(file string, loops []*cronLoop, forGood bool, ready func() bool) *cronLoop {
	f.t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		all := true
		for _, c := range loops {
			all = all && c.finished()
		}
		if all {
			return nil
		}
		if ready() {
			if pid := f.holderPID(file); pid != 0 {
				for _, c := range loops {
					if c.killIfPID(pid, forGood) {
						return c
					}
				}
			}
		}
		time.Sleep(time.Millisecond)
	}
	f.t.Fatal("no process held the file within 5 minutes")
	return nil
}

// waitAll waits for every loop to end, within limit.
func waitAll(t *testing.T, limit time.Duration, loops ...*cronLoop) {
	t.Helper()
	timeout := time.After(limit)
	for _, c := range loops {
		select {
		case <-c.done:
		case <-timeout:
			for _, c := range loops {
				t.Log(c)
			}
			t.Fatalf("the loops did not finish within %s", limit)
		}
	}
}

// createdOnce checks the sandbox's own count: every reference prefix-00001..rows created exactly
// once, and nothing else among refs with that prefix.
func createdOnce(t *testing.T, sb *sandbox.Server, prefix string, rows int) {
	t.Helper()
	counts := sb.CreateCounts()
	var missing, twice []string
	for i := 1; i <= rows; i++ {
		ref := fmt.Sprintf("%s-%05d", prefix, i)
		switch n := counts[ref]; {
		case n == 0:
			missing = append(missing, ref)
		case n > 1:
			twice = append(twice, fmt.Sprintf("%s x%d", ref, n))
		}
		delete(counts, ref)
	}
	for ref := range counts {
		if !strings.HasPrefix(ref, prefix+"-") {
			delete(counts, ref)
		}
	}
	if len(missing) > 0 || len(twice) > 0 || len(counts) > 0 {
		t.Errorf("created at the service for %s: %d missing %v, %d more than once %v, %d not in the file %v",
			prefix, len(missing), missing, len(twice), twice, len(counts), counts)
	}
}

// maxCreatesInAnySecond is the most creates the service made within one second, by its own
// records' times.
func maxCreatesInAnySecond(sb *sandbox.Server) int {
	var at []time.Time
	for _, r := range sb.Payouts() {
		at = append(at, r.CreatedAt)
	}
	return maxInAnySecond(at)
}

// maxInAnySecond is the most of times within one second, (t-1s, t], wherever it starts.
func maxInAnySecond(at []time.Time) int {
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	most, lo := 0, 0
	for hi := range at {
		for !at[lo].After(at[hi].Add(-time.Second)) {
			lo++
		}
		most = max(most, hi-lo+1)
	}
	return most
}

// watchGrants records, from now on, every turn the merchant's shared rate limit grants, on the
// database server's clock, in a table of the test's own beside the ledger's: the limiter's
// contract, read where it is kept, whatever the delays between a turn and its request.
func (f *fleet) watchGrants() {
	f.t.Helper()
	if _, err := f.db.Exec(`CREATE SCHEMA fleet_watch;
CREATE TABLE fleet_watch.grants (at timestamptz NOT NULL);
CREATE FUNCTION fleet_watch.grant_taken() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.granted IS NOT NULL AND (TG_OP = 'INSERT' OR NEW.granted IS DISTINCT FROM OLD.granted) THEN
		INSERT INTO fleet_watch.grants VALUES (NEW.granted);
	END IF;
	RETURN NULL;
END $$;
CREATE TRIGGER fleet_watch_grants AFTER INSERT OR UPDATE ON rate_limits
	FOR EACH ROW EXECUTE FUNCTION fleet_watch.grant_taken();`); err != nil {
		f.t.Fatal(err)
	}
}

// grants are the turns watchGrants recorded.
func (f *fleet) grants() []time.Time {
	f.t.Helper()
	rows, err := f.db.Query(`SELECT at FROM fleet_watch.grants`)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	var out []time.Time
	for rows.Next() {
		var at time.Time
		if err := rows.Scan(&at); err != nil {
			f.t.Fatal(err)
		}
		out = append(out, at)
	}
	if err := rows.Err(); err != nil {
		f.t.Fatal(err)
	}
	return out
}

// checkRate checks that the processes kept rate with burst: the shared limiter granted at most
// rate+burst turns in any second of the server's clock, every request the service saw had a
// turn, and requests reached the service's door at a mean rate within arrivalMeanSlack of rate
// and at most arrivalPeak in any second. The door is the fleet's front handler, which notes each
// request as it comes in: the sandbox's own count, taken once its handler runs, adds the
// test server's scheduling on a busy machine to the senders', and is only reported.
func (f *fleet) checkRate(rate, burst int) string {
	f.t.Helper()
	grants := f.grants()
	inSecond := maxInAnySecond(grants)
	st := f.sb.Stats()
	requests := 0
	for _, n := range st.Requests {
		requests += n
	}
	densest, what := f.densestSecond()
	if inSecond > rate+burst {
		f.t.Errorf("the shared limit granted %d turns within one second at --rate %d --burst %d", inSecond, rate, burst)
	}
	if requests > len(grants) {
		f.t.Errorf("the service saw %d requests and the shared limit granted %d turns: some went unpaced", requests, len(grants))
	}
	if most := arrivalPeak(rate, burst); densest > most {
		f.t.Errorf("%d requests reached the service within one second at --rate %d --burst %d: want at most %d (%v)",
			densest, rate, burst, most, what)
	}
	if mean := f.meanArrivalRate(); mean > float64(rate)*arrivalMeanSlack {
		f.t.Errorf("requests reached the service at %.2f a second over the run at --rate %d: want at most %.2f",
			mean, rate, float64(rate)*arrivalMeanSlack)
	}
	return fmt.Sprintf("turns granted %d for %d requests, most turns in any second %d; most requests arriving in any second %d (%v; %d by the sandbox's count), most creates in any second %d",
		len(grants), requests, inSecond, densest, what, st.MaxInAnySecond, maxCreatesInAnySecond(f.sb))
}

// meanArrivalRate is the API requests that reached the service a second, from the first to the
// last.
func (f *fleet) meanArrivalRate() float64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.arrivals) < 2 {
		return 0
	}
	first, last := f.arrivals[0].at, f.arrivals[0].at
	for _, a := range f.arrivals {
		if a.at.Before(first) {
			first = a.at
		}
		if a.at.After(last) {
			last = a.at
		}
	}
	return float64(len(f.arrivals)-1) / last.Sub(first).Seconds()
}

// densestSecond is the most API requests that reached the service within one second, and what
// they were.
func (f *fleet) densestSecond() (int, map[string]int) {
	f.mu.Lock()
	at := append([]arrival(nil), f.arrivals...)
	f.mu.Unlock()
	sort.Slice(at, func(i, j int) bool { return at[i].at.Before(at[j].at) })
	most, lo, from := 0, 0, 0
	for hi := range at {
		for !at[lo].at.After(at[hi].at.Add(-time.Second)) {
			lo++
		}
		if hi-lo+1 > most {
			most, from = hi-lo+1, lo
		}
	}
	what := map[string]int{}
	for _, a := range at[from : from+most] {
		if strings.Contains(a.what, "payout/") {
			a.what = "GET payout/REF"
		}
		what[a.what]++
	}
	return most, what
}

// ledgerStates checks that every payout of the ledger is SUBMITTED or SUCCEEDED, and counts them.
func (f *fleet) ledgerStates(want int) {
	f.t.Helper()
	db, err := ledger.Open(context.Background(), f.url, ledger.Options{})
	if err != nil {
		f.t.Fatal(err)
	}
	defer db.Close()
	list := ledgertest.Payouts(f.t, db, ledger.Filter{})
	if len(list) != want {
		f.t.Errorf("the ledger holds %d payouts, want %d", len(list), want)
	}
	for _, p := range list {
		if !p.State.Accepted() {
			f.t.Errorf("%s: state %s after a clean finish", p.Ref, p.State)
		}
	}
}

// resultCSVOf is the result CSV a run's --json names.
func resultCSVOf(t *testing.T, runJSON string) string {
	t.Helper()
	var res struct {
		Reports []string `json:"reports"`
	}
	if err := json.Unmarshal([]byte(runJSON), &res); err != nil {
		t.Fatalf("run --json printed %q: %v", runJSON, err)
	}
	for _, p := range res.Reports {
		if strings.HasSuffix(p, ".result.csv") {
			return p
		}
	}
	t.Fatalf("the run named no result CSV: %s", runJSON)
	return ""
}

// tiesOut checks a run's result CSV against its file: every reference once, and the amounts by
// state add up to the file's total.
func tiesOut(t *testing.T, path string, prefix string, rows int, total decimal.Decimal) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	seen := map[string]int{}
	byState := map[string]decimal.Decimal{}
	sum := decimal.Zero
	for _, r := range recs[1:] {
		ref := r[col["external_invoice_ref"]]
		if !strings.HasPrefix(ref, prefix+"-") {
			continue
		}
		seen[ref]++
		amount, err := decimal.NewFromString(r[col["amount"]])
		if err != nil {
			t.Fatalf("%s: %s: amount %q: %v", path, ref, r[col["amount"]], err)
		}
		byState[r[col["state"]]] = byState[r[col["state"]]].Add(amount)
		sum = sum.Add(amount)
	}
	for i := 1; i <= rows; i++ {
		if ref := fmt.Sprintf("%s-%05d", prefix, i); seen[ref] != 1 {
			t.Errorf("the result CSV lists %s %d times, want once", ref, seen[ref])
		}
	}
	if len(seen) != rows || !sum.Equal(total) {
		t.Errorf("the result CSV lists %d references summing to %s by state %v; the file has %d summing to %s",
			len(seen), sum, byState, rows, total)
	}
	t.Logf("result CSV: %d lines, by state %v, total %s", len(seen), byState, sum.StringFixed(2))
}
