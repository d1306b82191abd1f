package main_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/payout/payout/internal/pgtest"
)

// BenchmarkEnginesRunRerun is BenchmarkPerfRunRerun on a SQLite ledger and on a PostgreSQL one,
// alternately in one sitting: a real `payout run` of PAYOUT_PERF_ROWS rows (100,000) at rate inf
// into a new ledger, then the rerun of the finished file. The PostgreSQL database is in a cluster
// that syncs every commit (pgtest.Durable), as SQLite does; its server's memory is not in the
// command's peak RSS. ledger-B/payout is what the run added to the ledger (the SQLite file with
// its write-ahead log; pg_database_size, without the server's write-ahead log) over the rows.
//
//	PAYOUT_PERF_REPEAT=3 go test -run '^$' -bench EnginesRunRerun -benchtime 1x -timeout 0 ./cmd/payout/
func BenchmarkEnginesRunRerun(b *testing.B) {
	rows := perfInt("PAYOUT_PERF_ROWS", 100_000)
	base := perfSandbox(b, 0)
	engines := []string{"sqlite", "postgres"}
	for range b.N {
		runs, reruns, perPayout := map[string][]sample{}, map[string][]sample{}, map[string][]int64{}
		for i := range perfRepeat() {
			for _, engine := range engines {
				u := newPerfUser(b, base)
				size := func() int64 { return ledgerBytes(b, u.ledger()) }
				if engine == "postgres" {
					url := pgtest.Durable(b)
					u.env = append(u.env, "PAYOUT_LEDGER="+url)
					size = func() int64 { return databaseBytes(b, url) }
				}
				u.init()
				empty := size()
				file := filepath.Join(u.dir, "pay.csv")
				writePerfCSV(b, file, fmt.Sprintf("%s%d", engine, i), rows)
				args := []string{"run", "--max-rows", strconv.Itoa(rows), "--report-dir", filepath.Join(u.dir, "reports"), file}
				runs[engine] = append(runs[engine], u.run(0, args...))
				perPayout[engine] = append(perPayout[engine], (size()-empty)/int64(rows))
				reruns[engine] = append(reruns[engine], u.run(0, args...))
			}
		}
		for _, engine := range engines {
			run, rerun := medianOf(runs[engine]), medianOf(reruns[engine])
			run.report(b, engine+"-run-")
			rerun.report(b, engine+"-rerun-")
			b.ReportMetric(float64(rows)/run.wall.Seconds(), engine+"-run-payouts/s")
			b.ReportMetric(float64(medianInt(perPayout[engine])), engine+"-ledger-B/payout")
		}
	}
}

// databaseBytes is the size of the database at url as its server reports it.
func databaseBytes(tb testing.TB, url string) int64 {
	tb.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow("SELECT pg_database_size(current_database())").Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}
