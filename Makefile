# Every target runs with Go alone; nothing here needs the internet beyond the Go module proxy.
GO ?= go
BIN := bin/payout
# The build's name for `payout version`: the nearest tag or the commit, marked when the tree differs.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)

.PHONY: build test test-short demo bench bench-postgres perf lint rowpath crashtest crashtest-postgres trail-postgres fuzz clean

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/payout

# The README's test command, as CI runs it.
test:
	$(GO) vet ./... && $(GO) test -race -p 4 -parallel 8 -timeout 15m ./...

# The quick loop while working: every test but those that start PostgreSQL, a browser or an
# office suite, and the crash campaign (go test -short). CI runs `test`.
test-short:
	$(GO) vet ./... && $(GO) test -short -p 4 -parallel 8 ./...

demo:
	$(GO) run ./cmd/payout demo

# Throughput, rate and memory goals: BENCHMARKS.md quotes these numbers. BenchmarkRunRate50
# pays 2,000 rows at --rate 50 (about 80 s with its bare loop); PAYOUT_BENCH_ROWS=200 is a quick look.
# BenchmarkPoolSizing pays 500 rows at --rate 100 against a service answering in 200 ms, with the
# pool sized by itself and with 4 workers (about 30 s).
# The engines' side-by-side benchmarks are bench-postgres's.
bench:
	$(GO) test -run '^$$' -bench . -skip Engines -benchtime 1x -timeout 60m ./batch/ ./batch/read/ ./batch/reconcile/
	$(GO) test -run '^$$' -bench . -skip Engines -benchmem -benchtime 2s -timeout 30m ./ledger/ ./ledger/sharedrate/ ./api/ ./api/sandbox/ ./batch/report/

# SQLite and PostgreSQL side by side, 3 times in turn so that a busy machine weighs on both alike
# (about 25 minutes): --rate 50 at 40 ms (PAYOUT_BENCH_ROWS, 2000), four writers on the chain, and
# the built binary's 100,000-row run and rerun (PAYOUT_PERF_ROWS, PAYOUT_PERF_REPEAT, alternating
# inside). PostgreSQL is a throwaway cluster that syncs its commits as SQLite's synchronous=FULL
# does; it needs `apt-get install -y postgresql`.
bench-postgres:
	for i in 1 2 3; do $(GO) test -run '^$$' -bench EnginesRate50 -benchtime 1x -timeout 60m ./batch/ || exit 1; done
	for i in 1 2 3; do $(GO) test -run '^$$' -bench EnginesFourWriters -benchtime 2s -timeout 30m ./ledger/ || exit 1; done
	$(GO) test -run '^$$' -bench EnginesRunRerun -benchtime 1x -count 1 -timeout 0 ./cmd/payout/

# Process-level figures: the built binary against a sandbox process on generated files, beside raw
# encoding/csv and excelize readers, each the median of PAYOUT_PERF_REPEAT (3) runs in one sitting.
# Sizes: PAYOUT_PERF_DRYRUN_ROWS (1000000), PAYOUT_PERF_ROWS (100000: run, rerun, reconcile),
# PAYOUT_PERF_XLSX_ROWS (100000), PAYOUT_PERF_LEDGER_PAYOUTS (2000000, generated once per schema
# into $$TMPDIR/payout-perf-ledger), PAYOUT_PERF_LEDGER_RUN_ROWS (1000).
perf:
	$(GO) test -run '^$$' -bench Perf -benchtime 1x -count 1 -timeout 0 ./cmd/payout/

# gofmt, vet and staticcheck. Staticcheck runs when it is installed (`go install
# honnef.co/go/tools/cmd/staticcheck@v0.8.2` puts it in $(go env GOPATH)/bin); without it lint says so
# and passes on gofmt and vet alone.
STATICCHECK ?= $(shell command -v staticcheck 2>/dev/null || ls "$$($(GO) env GOPATH)/bin/staticcheck" 2>/dev/null)

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...
	@if [ -n "$(STATICCHECK)" ]; then echo "$(STATICCHECK) ./..."; "$(STATICCHECK)" ./...; \
	else echo "lint: staticcheck is not installed, so it did not run: go install honnef.co/go/tools/cmd/staticcheck@v0.8.2"; fi

# The files a row crosses: a one-row `payout run`, built with coverage, and the module's files in
# which it ran a statement, by package. `.ci/rowpath DIR` counts a checkout of another commit.
rowpath:
	bash .ci/rowpath

# The long crash campaign: the built binary SIGKILLed at 25 seeded moments over a 1,000-row file, 5 seeds,
# at --rate 50-100 and 4-16 workers against a sandbox answering in 5-50 ms with lost answers, 5xx and 429.
crashtest:
	PAYOUT_CRASH_SEEDS=5 PAYOUT_CRASH_ROWS=1000 PAYOUT_CRASH_KILLS=25 $(GO) test -run TestCrashResume -count=1 -timeout 60m -v ./cmd/payout/

# The same campaign on one PostgreSQL ledger (a throwaway cluster from Debian's postgresql package),
# with two processes looping on each file as two hosts' cron jobs, the one holding the file SIGKILLed at
# each moment; then three processes on one 3,000-row file at --rate 50, the payer killed for good;
# then three files of 1,000 rows at once, together held to --rate 30 with the chain's lock held 30 s
# midway; then 20 hosts paused after their intent for 1 s to 5 minutes each while another host
# pays their file (0 duplicates), and a host gone silent holding the chain's lock (about 75 minutes).
crashtest-postgres:
	PAYOUT_CRASH_SEEDS=5 PAYOUT_CRASH_ROWS=1000 PAYOUT_CRASH_KILLS=25 PAYOUT_PG_ROWS=3000 PAYOUT_PG_RATE=50 PAYOUT_PG_SHARE_ROWS=1000 \
		PAYOUT_PG_STALL_SECONDS=30 PAYOUT_PAUSE_TRIES=20 PAYOUT_PAUSE_MAX_SECONDS=300 \
		$(GO) test -run 'TestPostgresCrashResume|TestThreeHostsPayOneFileOnPostgresOneKilled|TestThreeFilesAtOnceShareTheRateOnPostgres|TestPausedHostNeverPaysTwiceOnPostgres|TestLateSendIsNeverSilentOnPostgres|TestSilentHostDoesNotStallTheOthersOnPostgres' -count=1 -timeout 120m -v ./cmd/payout/

# Every column of every table of a PostgreSQL ledger edited by hand, one at a time, each named by
# audit verify (about a minute; the tests edit every fourth column).
trail-postgres:
	PAYOUT_PG_TRAIL_ALL=1 $(GO) test -run TestAuditVerifyNamesAHandEditOfEveryColumnOnPostgres -count=1 -timeout 30m ./cmd/payout/

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParseAmount -fuzztime 60s ./batch/read/
	$(GO) test -run '^$$' -fuzz FuzzCSVReader -fuzztime 60s ./batch/read/

clean:
	rm -rf bin
