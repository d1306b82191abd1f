package main_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/internal/fakeclock"
	"github.com/payout/payout/internal/pgtest"
)

// TestCommandsOfAPaidRunOnPostgres walks a run paid on a PostgreSQL ledger, and on a SQLite file
// beside it, through the commands that follow it: the run's answers are lost and its lookups
// turned away, so it stops with payouts of unknown outcome; `payout reconcile` finds them; the
// rerun pays the rest; `payout callbacks` stores the service's signed callbacks, which settle
// them all; `payout report` writes the rerun's report again, which ties out to the file (its
// lines include those the stopped run sent); `payout audit export` writes its evidence pack,
// which `payout audit verify --pack` finds intact (it holds the events of those lines too), as
// `payout audit verify` finds the ledger's trail.
func TestCommandsOfAPaidRunOnPostgres(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	t.Run("PostgreSQL", func(t *testing.T) { commandsOfAPaidRun(t, pgtest.New(t), "pgx") })
	t.Run("SQLite file", func(t *testing.T) {
		commandsOfAPaidRun(t, filepath.Join(t.TempDir(), "payout-ledger.db"), "sqlite")
	})
}

// commandsOfAPaidRun is the walk on the ledger at url, which driver reads.
func commandsOfAPaidRun(t *testing.T, url, driver string) {
	began := time.Now()
	clock := fakeclock.New(time.Now())
	lost := sandbox.Faults{LostResponseRate: 1, ThrottleLookups: 1}
	sb := sandbox.New(sandbox.Options{AuthToken: "e2e-token", HashKey: []byte("e2e-hash-key"), Now: clock.Now,
		SettleAfter: time.Hour, SettleInterval: -1, SendCallbacks: true, Faults: lost})
	t.Cleanup(sb.Close)
	u := newUserWithoutLedger(t, sb)
	u.env = append(u.env, "PAYOUT_LEDGER="+url)
	if out, errOut, code := u.run("init"); code != 0 {
		t.Fatalf("init: exit %d: %s %s", code, out, errOut)
	}
	receiver := startServer(t, u, []string{"PAYOUT_HASH_KEY=e2e-hash-key"}, "callbacks", "--listen", "127.0.0.1:0")
	u.env = append(u.env, "PAYOUT_CALLBACK_URL="+receiver)

	file, total := pgSample(t, u)
	out, errOut, code := u.run("run", "--json", file)
	var res struct {
		RunID   string `json:"run_id"`
		Unknown int    `json:"unknown"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || (code != 1 && code != 4) || res.Unknown == 0 {
		t.Fatalf("run whose every answer is lost: exit %d, %s %s; want 1 or 4 with payouts of unknown outcome", code, out, errOut)
	}
	unknown := res.Unknown

	sb.SetFaults(sandbox.Faults{})
	// Exit 4: the rows the stopped run never sent are still to pay; none is of unknown outcome.
	if out, errOut, code := u.run("reconcile"); code != 4 || !strings.Contains(out, fmt.Sprintf("%d looked up, %d changed", unknown, unknown)) ||
		!strings.Contains(out, "unknown 0") {
		t.Fatalf("reconcile after the lost answers: exit %d: %s %s; want 4, the %d unknown looked up and none left", code, out, errOut, unknown)
	}
	if out, _, _ := u.run("status"); statusCount(t, out, "UNKNOWN") != 0 || statusCount(t, out, "SUBMITTED") != unknown {
		t.Errorf("status after reconcile: want the %d payouts of unknown outcome SUBMITTED:\n%s", unknown, out)
	}
	// The run that the lost answers stopped is resumed: it sends what was never sent.
	out, errOut, code = u.run("run", "--json", file)
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 {
		t.Fatalf("rerun once the service answers: exit %d: %s %s", code, out, errOut)
	}

	clock.Advance(2 * time.Hour)
	sb.Settle()
	for deadline := time.Now().Add(30 * time.Second); sb.Stats().Callbacks < 50 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
	}
	if st := sb.Stats(); st.Callbacks != 50 || st.CallbackFailures != 0 {
		t.Fatalf("the receiver took %d callbacks (%d failed), want 50", st.Callbacks, st.CallbackFailures)
	}
	if out, _, _ := u.run("status"); statusCount(t, out, "SUCCEEDED") != 50 {
		t.Errorf("status after the callbacks: want every payout SUCCEEDED:\n%s", out)
	}
	db, err := sql.Open(driver, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var stored int
	if err := db.QueryRow(`SELECT count(*) FROM callbacks`).Scan(&stored); err != nil || stored != 50 {
		t.Errorf("the ledger stored %d callbacks (%v), want 50", stored, err)
	}

	out, errOut, code = u.run("report", "--report-dir", "again", res.RunID)
	var csvPath string
	for _, p := range strings.Fields(out) {
		if strings.HasSuffix(p, ".result.csv") {
			csvPath = p
		}
	}
	if code != 0 || csvPath == "" {
		t.Fatalf("report %s: exit %d: %s %s; want a result CSV", res.RunID, code, out, errOut)
	}
	if !filepath.IsAbs(csvPath) {
		csvPath = filepath.Join(u.dir, csvPath)
	}
	tiesOut(t, csvPath, "PGW", 50, total)

	pack, _ := exportPack(t, u, res.RunID, "pack.zip")
	if out, errOut, code := u.run("audit", "verify"); code != 0 || !strings.HasPrefix(out, "intact") {
		t.Errorf("audit verify: exit %d: %s %s", code, out, errOut)
	}
	createdOnce(t, sb, "PGW", 50)
	st := sb.Stats()
	t.Logf("rows 50, %d unknown after the first run, creates %d, duplicates %d, lost answers %d, callbacks %d stored %d; pack %s; %s",
		unknown, st.Creates, len(sb.Duplicates()), st.Lost, st.Callbacks, stored, filepath.Base(pack), time.Since(began).Round(time.Millisecond))
}

// statusCount is the number of payouts `payout status` shows in state.
func statusCount(t *testing.T, status, state string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s*` + state + `\s+(\d+)\s`).FindStringSubmatch(status)
	if m == nil {
		t.Fatalf("status shows no line for %s:\n%s", state, status)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// pgSample writes a file of 50 payouts, PGW-00001..., and returns its path and total.
func pgSample(t *testing.T, u *user) (string, decimal.Decimal) {
	t.Helper()
	f := &fleet{t: t, dir: u.dir}
	return f.payFile("walk.csv", "PGW", 3, 50)
}
