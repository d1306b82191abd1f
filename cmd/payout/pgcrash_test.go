package main_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestPostgresCrashResume is TestCrashResume's campaign (its faults, seeds and settings) with two
// processes per file on one PostgreSQL ledger, as two hosts' cron jobs: both run `payout run` of
// the file again and again until it exits 0. At each seeded moment the one that holds the file
// (the ledger's registry of processes says which) is SIGKILLed; its loop starts it again. At the
// end every row was created at the service exactly once, the ledger's payouts are all SUBMITTED
// or SUCCEEDED, and `payout audit verify` finds the trail intact. `make crashtest-postgres` runs
// the long campaign (PAYOUT_CRASH_SEEDS, _ROWS, _KILLS).
func TestPostgresCrashResume(t *testing.T) {
	t.Parallel() // long, and mostly waiting on processes: beside the other long ones
	seeds := envInt("PAYOUT_CRASH_SEEDS", 2)
	rows := envInt("PAYOUT_CRASH_ROWS", 120)
	kills := envInt("PAYOUT_CRASH_KILLS", 6)
	for seed := 1; seed <= seeds; seed++ {
		set := crashSettings[(seed-1)%len(crashSettings)]
		t.Run(fmt.Sprintf("seed %d rate %d workers %d", seed, set.rate, set.workers), func(t *testing.T) {
			postgresCrashCampaign(t, uint64(seed), set, rows, kills)
		})
	}
}

func postgresCrashCampaign(t *testing.T, seed uint64, set crashSetting, rows, kills int) {
	began := time.Now()
	rng := rand.New(rand.NewPCG(seed, 99))
	f := newFleet(t, int64(seed), crashFaults)
	prefix := fmt.Sprintf("CR%d", seed)
	file, _ := f.payFile("crash.csv", prefix, int(seed), rows)
	args := []string{"run", "--rate", strconv.Itoa(set.rate), "--burst", "1", "--workers", strconv.Itoa(set.workers),
		"--unknown-grace", "50ms", "--in-flight-hold", "50ms", "--report-dir", filepath.Join(f.dir, "reports"), file}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	loops := []*cronLoop{f.cron("host A", args...), f.cron("host B", args...)}
	for _, c := range loops {
		c.start(ctx)
	}
	killed := 0
	for k := 0; k < kills; k++ {
		// Kill once the service has seen a seeded number of further creates: a moment inside the
		// sending, wherever the workers happen to be.
		target := f.sb.Stats().Creates + 1 + rng.IntN(rows/kills+1)
		if f.killHolder(file, loops, false, func() bool { return f.sb.Stats().Creates >= target }) == nil {
			break // the file was paid first
		}
		killed++
	}
	if killed == 0 {
		t.Fatal("the file was paid before any kill: the campaign proved nothing")
	}
	waitAll(t, 10*time.Minute, loops...)
	for _, c := range loops {
		t.Log(c)
		if c.out == "" && len(c.others) > 0 {
			t.Errorf("%s stopped without exiting 0", c.name)
		}
	}
	createdOnce(t, f.sb, prefix, rows)
	st := f.sb.Stats()
	if st.Creates != rows {
		t.Errorf("the service created %d payouts for %d rows", st.Creates, rows)
	}
	f.ledgerStates(rows)
	if out, errOut, code := f.run("audit", "verify"); code != 0 {
		t.Errorf("audit verify after the campaign: exit %d: %s %s", code, out, errOut)
	}
	t.Logf("rows %d, kills %d, creates %d, duplicates %d; lost answers %d, 5xx %d, 429 %d, most requests in any second %d; %s",
		rows, killed, st.Creates, len(f.sb.Duplicates()), st.Lost, st.ServerErrors, st.RateLimited, st.MaxInAnySecond,
		time.Since(began).Round(time.Millisecond))
}
