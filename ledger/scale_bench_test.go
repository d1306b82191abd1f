package ledger_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/ledger"
)

// The benchmarks here compare the ledger's hot paths on an empty ledger and on one holding many
// payouts written the way runs write them. The big ledger is made once and kept in the system's
// temporary folder, by schema and size; PAYOUT_BENCH_PAYOUTS sets its size (default
// 100000; 1000000 or 2000000 for the figures of a ledger after years). Past organicPayouts, the
// ledger is made of copies of the first organicPayouts under other references, added by SQL:
// writing millions of payouts through the API takes hours on a small machine.

// generatorVersion names the way fillLikeRuns writes: change it when that changes, so that a
// cached ledger of the old kind is not reused.
const generatorVersion = 3

// runSize is the rows of one generated run, and of the run the benchmarks time.
const runSize = 1000

// organicPayouts is the most payouts written through the ledger's API.
const organicPayouts = 100000

func benchPayouts(tb testing.TB) int {
	n := 100000
	if s := os.Getenv("PAYOUT_BENCH_PAYOUTS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			tb.Fatalf("PAYOUT_BENCH_PAYOUTS=%q: want a number of payouts", s)
		}
		n = v
	}
	return n / runSize * runSize
}

var quiet = ledger.Options{Logger: slog.New(slog.DiscardHandler)}

// cachedLedger returns the path of a closed ledger of n payouts, made on first use.
func cachedLedger(tb testing.TB, n int) string {
	tb.Helper()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("payout-bench-ledger-%s-g%d-%d.db", ledger.SchemaDigest(), generatorVersion, n))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	tmp := path + ".making"
	for _, name := range []string{tmp, tmp + "-wal", tmp + "-shm"} {
		os.Remove(name)
	}
	start := time.Now()
	if n > organicPayouts && n%organicPayouts == 0 {
		copyFile(tb, cachedLedger(tb, organicPayouts), tmp)
		db := openQuiet(tb, tmp)
		for k := 1; k < n/organicPayouts; k++ {
			addCopies(tb, db, fmt.Sprintf(".%d", k))
		}
		if err := db.Close(); err != nil {
			tb.Fatal(err)
		}
	} else {
		db, err := ledger.Create(context.Background(), tmp, quiet)
		if err != nil {
			tb.Fatal(err)
		}
		for first := 0; first < n; first += runSize {
			fillLikeRuns(tb, db, fmt.Sprintf("gen-%07d", first/runSize), first, runSize)
		}
		if err := db.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("made %s (%d payouts) in %s", path, n, time.Since(start).Round(time.Second))
	return path
}

// addCopies adds, in one transaction, a copy of every organic run with its rows, payouts, events
// and callbacks, under the same names followed by suffix.
func addCopies(tb testing.TB, db *ledger.DB, suffix string) {
	tb.Helper()
	const organic = ` WHERE instr(%s, '.') = 0`
	payoutCols := `line, recipient, provider_id, bank, account, amount, description, state, transaction_status,
		bank_reference_no, attempts, not_found_count, first_not_found_at, last_error, created_at, updated_at`
	tx, err := ledger.SQLOf(db).Begin()
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback()
	for _, q := range []string{
		`INSERT INTO runs (id, kind, file, file_sha256, started_at, ended_at, status, exit_code)
			SELECT id || ?1, kind, file, file_sha256 || ?1, started_at, ended_at, status, exit_code FROM runs` + fmt.Sprintf(organic, "id"),
		`INSERT INTO run_rows (run_id, line, ref, recipient, provider_id, bank, account, amount, description, rejected, reason, skipped)
			SELECT run_id || ?1, line, ref || ?1, recipient, provider_id, bank, account, amount, description, rejected, reason, skipped
			FROM run_rows` + fmt.Sprintf(organic, "run_id"),
		`INSERT INTO payouts (ref, run_id, invoice_no, ` + payoutCols + `)
			SELECT ref || ?1, run_id || ?1, invoice_no || ?1, ` + payoutCols + ` FROM payouts` + fmt.Sprintf(organic, "ref"),
		`INSERT INTO events (ref, run_id, at, from_state, to_state, detail, payload)
			SELECT ref || ?1, CASE run_id WHEN '' THEN '' ELSE run_id || ?1 END, at, from_state, to_state, detail, payload
			FROM events` + fmt.Sprintf(organic, "ref") + ` ORDER BY id`,
		`INSERT INTO callbacks (received_at, invoice_no, verdict, payload)
			SELECT received_at, invoice_no || ?1, verdict, payload FROM callbacks` + fmt.Sprintf(organic, "invoice_no") + ` ORDER BY id`,
	} {
		if _, err := tx.Exec(q, suffix); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

// copyLedger copies the closed ledger at src into a temporary folder, for a benchmark that writes.
func copyLedger(tb testing.TB, src string) string {
	tb.Helper()
	dst := filepath.Join(tb.TempDir(), "ledger.db")
	copyFile(tb, src, dst)
	return dst
}

func copyFile(tb testing.TB, src, dst string) {
	tb.Helper()
	in, err := os.Open(src)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		tb.Fatal(err)
	}
	if err := out.Close(); err != nil {
		tb.Fatal(err)
	}
}

func openQuiet(tb testing.TB, path string) *ledger.DB {
	tb.Helper()
	db, err := ledger.Open(context.Background(), path, ledger.Options{Logger: quiet.Logger, Verify: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// generatedPayout is payout i as a payroll file would have it.
func generatedPayout(i int) ledger.Payout {
	return ledger.Payout{Ref: fmt.Sprintf("PAY-2026-%08d", i), Line: i%runSize + 2, Recipient: fmt.Sprintf("Employee Name %d", i),
		ProviderID: int64(1 + i%9), Bank: "Maybank2u", Account: fmt.Sprintf("1%011d", i),
		Amount: decimal.New(int64(100000+i%900000), -2), Description: "Salary November 2026"}
}

// callbackPayload is a service's callback of a successful payout, as the callbacks receiver keeps it.
func callbackPayload(p ledger.Payout, invoice, bankRef string) string {
	return fmt.Sprintf(`{"amount":"%s","bank_reference_no":"%s","bank_response_success":true,"biz_msg_id":"BM%s","display_name":"%s",`+
		`"error_description":[],"from_account_no":"POOL-0001","invoice_no":"%s","invoice_status":"SUCCESS","invoice_status_id":2,`+
		`"orgn_from_account_currency":"MYR","orgn_payment_description":"%s","orgn_third_party_account_no":"%s",`+
		`"orgn_transaction_amount":"%s","payment_switch_charge_rate":"0","payout_service_id":%d,"response_code":2100}`,
		p.Amount.StringFixed(2), bankRef, invoice[3:], p.Bank, invoice, p.Description, p.Account, p.Amount.StringFixed(2), p.ProviderID)
}

// fillLikeRuns writes what a run of n payouts that all succeed leaves in the ledger: the run, its
// input rows, each payout with its "recorded" event, then READY -> SUBMITTING -> SUBMITTED (the
// service's answer) -> SUCCEEDED (its callback: the payload with the event, a receipt in the
// callbacks table).
func fillLikeRuns(tb testing.TB, db *ledger.DB, runID string, first, n int) []ledger.Payout {
	tb.Helper()
	ctx := context.Background()
	if err := db.AddRun(ctx, ledger.Run{ID: runID, Kind: "run", File: runID + ".csv", FileSHA256: fmt.Sprintf("%064x", first),
		StartedAt: time.Now(), Status: "running"}); err != nil {
		tb.Fatal(err)
	}
	ps := make([]ledger.Payout, n)
	rows := make([]ledger.RunRow, n)
	for i := range ps {
		ps[i] = generatedPayout(first + i)
		rows[i] = rowOf(ps[i])
		rows[i].Amount = ps[i].Amount.StringFixed(2)
	}
	if err := db.Record(ctx, runID, rows, ps); err != nil {
		tb.Fatal(err)
	}
	sending := make([]ledger.Change, n)
	accepted := make([]ledger.Change, n)
	settled := make([]ledger.Change, n)
	callbacks := make([]ledger.StoredCallback, n)
	for i, p := range ps {
		invoice, bankRef := fmt.Sprintf("POI%012d", first+i), fmt.Sprintf("MBB%013d", first+i)
		sending[i] = ledger.Change{Ref: p.Ref, From: ledger.Ready, To: ledger.Submitting, RunID: runID, CountAttempt: true,
			Detail: fmt.Sprintf("sending %s MYR to ********%s at provider %d", p.Amount.StringFixed(2), p.Account[len(p.Account)-4:], p.ProviderID)}
		accepted[i] = ledger.Change{Ref: p.Ref, From: ledger.Submitting, To: ledger.Submitted, RunID: runID, InvoiceNo: invoice,
			TransactionStatus: "PENDING", ResetNotFound: true, Detail: "accepted by the service: invoice " + invoice + ", status PENDING"}
		payload := callbackPayload(p, invoice, bankRef)
		settled[i] = ledger.Change{Ref: p.Ref, From: ledger.Submitted, To: ledger.Succeeded, TransactionStatus: "SUCCESS",
			BankReferenceNo: bankRef, Detail: "callback: SUCCESS, bank reference " + bankRef, Payload: payload}
		// The receiver keeps an applied callback's payload in the event only.
		callbacks[i] = ledger.StoredCallback{InvoiceNo: invoice, Verdict: "applied"}
	}
	for _, changes := range [][]ledger.Change{sending, accepted, settled} {
		if err := db.Apply(ctx, changes...); err != nil {
			tb.Fatal(err)
		}
	}
	storeCallbacks(tb, db, callbacks)
	if err := db.FinishRun(ctx, runID, "finished", 0, time.Now()); err != nil {
		tb.Fatal(err)
	}
	return ps
}

// storeCallbacks stores callbacks one by one, as the receiver does, each with its row event.
func storeCallbacks(tb testing.TB, db *ledger.DB, cbs []ledger.StoredCallback) {
	tb.Helper()
	for _, c := range cbs {
		if err := db.StoreCallback(context.Background(), c); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkLedgerSize reports the bytes per payout of a ledger of payouts written the way runs
// write them, in all and by table and index (SQLite's dbstat).
func BenchmarkLedgerSize(b *testing.B) {
	n := benchPayouts(b)
	if n == 0 {
		b.Skip("PAYOUT_BENCH_PAYOUTS=0")
	}
	path := cachedLedger(b, n)
	db := openQuiet(b, copyLedger(b, path))
	var total int64
	type part struct {
		name  string
		bytes int64
	}
	var parts []part
	for range b.N {
		parts = parts[:0]
		rows, err := ledger.SQLOf(db).Query(`SELECT name, SUM(pgsize) FROM dbstat GROUP BY name`)
		if err != nil {
			b.Fatal(err)
		}
		total = 0
		for rows.Next() {
			var p part
			if err := rows.Scan(&p.name, &p.bytes); err != nil {
				b.Fatal(err)
			}
			parts = append(parts, p)
			total += p.bytes
		}
		if err := rows.Err(); err != nil {
			b.Fatal(err)
		}
		rows.Close()
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].bytes > parts[j].bytes })
	for _, p := range parts {
		b.Logf("%-26s %8.1f B/payout", p.name, float64(p.bytes)/float64(n))
	}
	b.ReportMetric(float64(total)/float64(n), "B/payout")
}

// BenchmarkCounts: `payout status`'s totals, on an empty ledger and on a big one.
func BenchmarkCounts(b *testing.B) {
	n := benchPayouts(b)
	empty, _ := mustOpen(b)
	big := openQuiet(b, cachedLedger(b, n))
	ctx := context.Background()
	var onEmpty, onBig time.Duration
	b.ResetTimer()
	for range b.N {
		for _, side := range []struct {
			db  *ledger.DB
			sum *time.Duration
		}{{empty, &onEmpty}, {big, &onBig}} {
			start := time.Now()
			if _, err := side.db.Counts(ctx, ledger.CountRead{}); err != nil {
				b.Fatal(err)
			}
			*side.sum += time.Since(start)
		}
	}
	reportSides(b, "Counts", onEmpty, onBig)
}

// BenchmarkRunOnABigLedger: what a run of runSize new rows asks of the ledger, on an empty ledger
// and on a big one, side by side: the look-up of its references, Record, then each payout's
// three changes applied one call each by eight workers (group commit), as a run does.
func BenchmarkRunOnABigLedger(b *testing.B) {
	n := benchPayouts(b)
	empty, _ := mustOpen(b)
	big := openQuiet(b, copyLedger(b, cachedLedger(b, n)))
	var lookup, record, apply [2]time.Duration
	b.ResetTimer()
	for i := range b.N {
		for side, db := range []*ledger.DB{empty, big} {
			l, r, a := timedRun(b, db, fmt.Sprintf("bench-%d", i), n+(i+1)*runSize)
			lookup[side] += l
			record[side] += r
			apply[side] += a
		}
	}
	reportSides(b, "Lookup", lookup[0], lookup[1])
	reportSides(b, "Record", record[0], record[1])
	reportSides(b, "Apply", apply[0], apply[1])
}

func timedRun(b *testing.B, db *ledger.DB, runID string, first int) (lookup, record, apply time.Duration) {
	ctx := context.Background()
	ps := make([]ledger.Payout, runSize)
	refs := make([]string, runSize)
	rows := make([]ledger.RunRow, runSize)
	for i := range ps {
		ps[i] = generatedPayout(first + i)
		refs[i], rows[i] = ps[i].Ref, rowOf(ps[i])
	}
	start := time.Now()
	if _, err := db.Lookup(ctx, refs, ledger.WholePayouts); err != nil {
		b.Fatal(err)
	}
	lookup = time.Since(start)
	if err := db.AddRun(ctx, ledger.Run{ID: runID, Kind: "run", File: runID + ".csv", StartedAt: time.Now(), Status: "running"}); err != nil {
		b.Fatal(err)
	}
	start = time.Now()
	if err := db.Record(ctx, runID, rows, ps); err != nil {
		b.Fatal(err)
	}
	record = time.Since(start)
	start = time.Now()
	var wg sync.WaitGroup
	work := make(chan ledger.Payout)
	for range 8 {
		wg.Go(func() {
			for p := range work {
				for _, c := range []ledger.Change{
					{Ref: p.Ref, From: ledger.Ready, To: ledger.Submitting, RunID: runID, CountAttempt: true, Detail: "sending"},
					{Ref: p.Ref, From: ledger.Submitting, To: ledger.Submitted, RunID: runID, InvoiceNo: "INV-" + p.Ref, TransactionStatus: "PENDING", Detail: "accepted"},
					{Ref: p.Ref, From: ledger.Submitted, To: ledger.Succeeded, RunID: runID, TransactionStatus: "SUCCESS", Detail: "settled"},
				} {
					if err := db.Apply(ctx, c); err != nil {
						b.Error(err)
						return
					}
				}
			}
		})
	}
	for _, p := range ps {
		work <- p
	}
	close(work)
	wg.Wait()
	apply = time.Since(start)
	return lookup, record, apply
}

// reportSides reports the mean time of what on each side, per call, and their ratio.
func reportSides(b *testing.B, what string, onEmpty, onBig time.Duration) {
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
	b.ReportMetric(per(onEmpty), what+"-empty-us")
	b.ReportMetric(per(onBig), what+"-big-us")
	if onEmpty > 0 {
		b.ReportMetric(float64(onBig)/float64(onEmpty), what+"-big/empty")
	}
}

// BenchmarkOpenForPaying: opening a ledger as a run does (Verify), on an empty ledger and on a
// big one.
func BenchmarkOpenForPaying(b *testing.B) {
	n := benchPayouts(b)
	_, emptyPath := mustOpen(b)
	bigPath := cachedLedger(b, n)
	var sides [2]time.Duration
	b.ResetTimer()
	for range b.N {
		for side, path := range []string{emptyPath, bigPath} {
			start := time.Now()
			db, err := ledger.Open(context.Background(), path, ledger.Options{Logger: quiet.Logger, Verify: true})
			if err != nil {
				b.Fatal(err)
			}
			if err := db.Close(); err != nil {
				b.Fatal(err)
			}
			sides[side] += time.Since(start)
		}
	}
	reportSides(b, "Open", sides[0], sides[1])
}

// BenchmarkQuickCheck: the full check of the big ledger, which reads every page.
func BenchmarkQuickCheck(b *testing.B) {
	db := openQuiet(b, cachedLedger(b, benchPayouts(b)))
	b.ResetTimer()
	for range b.N {
		if err := db.QuickCheck(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyChain: `payout audit verify` of the big ledger: the file check, the chain, every
// payout replayed, the totals, every covered row and the schema.
//
//	go test -run '^$' -bench VerifyChain -benchtime 1x ./ledger/
func BenchmarkVerifyChain(b *testing.B) {
	db := openQuiet(b, cachedLedger(b, benchPayouts(b)))
	b.ResetTimer()
	for range b.N {
		rep, err := db.VerifyChain(context.Background())
		if err != nil || len(rep.Findings) != 0 {
			b.Fatalf("%v %v", rep.Findings, err)
		}
		b.ReportMetric(float64(rep.Payouts), "payouts")
	}
}

// BenchmarkCallbackReads: what the callback receiver reads for each callback, the payout its
// invoice names and the payouts awaiting an invoice to its account and amount, in a ledger of one
// run of 100 payouts and in one of a single run of 20,000, side by side: each reads an index of
// its own, so neither grows with the run.
//
//	go test -run '^$' -bench CallbackReads -benchtime 2000x ./ledger/
func BenchmarkCallbackReads(b *testing.B) {
	ctx := context.Background()
	var sides [2]struct {
		db      *ledger.DB
		p       ledger.Payout
		invoice string // fillLikeRuns's for p
	}
	for side, n := range []int{100, 20000} {
		db, _ := mustOpen(b)
		ps := oneSubmittedRun(b, db, n)
		sides[side].db, sides[side].p, sides[side].invoice = db, ps[n/2], fmt.Sprintf("POI%012d", n/2)
	}
	var byInvoice, awaiting [2]time.Duration
	b.ResetTimer()
	for range b.N {
		for side, s := range sides {
			start := time.Now()
			found := 0
			err := s.db.WalkPayouts(ctx, ledger.Filter{InvoiceNo: s.invoice}, 2, func(ledger.Payout) error { found++; return nil })
			if err != nil || found != 1 {
				b.Fatalf("by invoice: %d found, %v", found, err)
			}
			byInvoice[side] += time.Since(start)
			start = time.Now()
			pending := ledger.Filter{States: []ledger.State{ledger.Submitting, ledger.Unknown}, Account: s.p.Account, Amount: s.p.Amount}
			if err := s.db.WalkPayouts(ctx, pending, 1, func(ledger.Payout) error { return nil }); err != nil {
				b.Fatal(err)
			}
			awaiting[side] += time.Since(start)
		}
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
	b.ReportMetric(per(byInvoice[0]), "invoice-100-us")
	b.ReportMetric(per(byInvoice[1]), "invoice-20k-us")
	b.ReportMetric(per(awaiting[0]), "awaiting-100-us")
	b.ReportMetric(per(awaiting[1]), "awaiting-20k-us")
}

// oneSubmittedRun records one run of n payouts, each SUBMITTED with its invoice number POI<i>.
func oneSubmittedRun(tb testing.TB, db *ledger.DB, n int) []ledger.Payout {
	tb.Helper()
	ctx := context.Background()
	runID := fmt.Sprintf("one-run-%d", n)
	if err := db.AddRun(ctx, ledger.Run{ID: runID, Kind: "run", File: runID + ".csv", StartedAt: time.Now(), Status: "running"}); err != nil {
		tb.Fatal(err)
	}
	ps := make([]ledger.Payout, n)
	rows := make([]ledger.RunRow, n)
	sending := make([]ledger.Change, n)
	accepted := make([]ledger.Change, n)
	for i := range ps {
		ps[i] = generatedPayout(i)
		ps[i].Line = i + 2
		rows[i] = rowOf(ps[i])
		rows[i].Amount = ps[i].Amount.StringFixed(2)
		sending[i] = ledger.Change{Ref: ps[i].Ref, From: ledger.Ready, To: ledger.Submitting, RunID: runID, CountAttempt: true}
		accepted[i] = ledger.Change{Ref: ps[i].Ref, From: ledger.Submitting, To: ledger.Submitted, RunID: runID, InvoiceNo: fmt.Sprintf("POI%012d", i)}
	}
	if err := db.Record(ctx, runID, rows, ps); err != nil {
		tb.Fatal(err)
	}
	for _, changes := range [][]ledger.Change{sending, accepted} {
		if err := db.Apply(ctx, changes...); err != nil {
			tb.Fatal(err)
		}
	}
	return ps
}
