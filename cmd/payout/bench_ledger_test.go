package main_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/runid"
	"github.com/payout/payout/ledger"
)

// BenchmarkPerfLedgerGrown: a run of PAYOUT_PERF_LEDGER_RUN_ROWS rows at rate inf, `payout
// reconcile` with nothing pending and `payout status`, on an empty ledger and on one holding
// PAYOUT_PERF_LEDGER_PAYOUTS earlier payouts, alternately. The grown ledger is generated once per
// schema and size and kept in the system's temporary folder (payout-perf-ledger), then copied.
func BenchmarkPerfLedgerGrown(b *testing.B) {
	payouts := perfInt("PAYOUT_PERF_LEDGER_PAYOUTS", 2_000_000)
	runRows := perfInt("PAYOUT_PERF_LEDGER_RUN_ROWS", 1000)
	grown := cachedLedger(b, payouts)
	base := perfSandbox(b, 0)
	empty := newPerfUser(b, base)
	empty.init()
	big := newPerfUser(b, base)
	streamCopy(b, grown, big.ledger())
	for range b.N {
		got := map[string][]sample{}
		for i := range perfRepeat() {
			for _, side := range []struct {
				name string
				u    *perfUser
			}{{"empty", empty}, {"grown", big}} {
				// Refs of their own: the sandbox answers a lookup with the first payout of a ref.
				for what, s := range ledgerRound(b, side.u, fmt.Sprintf("%s%d", side.name, i), runRows) {
					key := side.name + "-" + what
					got[key] = append(got[key], s)
				}
			}
		}
		for name, samples := range got {
			medianOf(samples).report(b, name+"-")
		}
		for _, what := range []string{"run", "reconcile", "status"} {
			b.ReportMetric(medianOf(got["grown-"+what]).wall.Seconds()/medianOf(got["empty-"+what]).wall.Seconds(), what+"-grown-vs-empty")
		}
		b.ReportMetric(float64(ledgerBytes(b, grown))/float64(payouts), "ledger-B/payout")
	}
}

// ledgerRound measures, on u's ledger, a reconcile with nothing pending, a status, and a run of
// rows new payouts under prefix; then reconciles them, unmeasured, so that the next round again
// finds nothing pending.
func ledgerRound(b *testing.B, u *perfUser, prefix string, rows int) map[string]sample {
	reports := filepath.Join(u.dir, "reports")
	out := map[string]sample{
		"reconcile": u.run(0, "reconcile", "--report-dir", reports),
		"status":    u.run(0, "status"),
	}
	file := filepath.Join(u.dir, prefix+".csv")
	writePerfCSV(b, file, prefix, rows)
	out["run"] = u.run(0, "run", "--report-dir", reports, file)
	u.run(0, "reconcile", "--report-dir", reports)
	return out
}

// cachedLedger is the path of a ledger holding payouts earlier payouts, generated on first use
// and kept under the system's temporary folder, keyed by the ledger's schema.
func cachedLedger(tb testing.TB, payouts int) string {
	tb.Helper()
	dir := filepath.Join(os.TempDir(), "payout-perf-ledger")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%d.db", schemaKey(tb), payouts))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	tmp := path + ".part"
	os.Remove(tmp)
	start := time.Now()
	generateLedger(tb, tmp, payouts)
	if err := os.Rename(tmp, path); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("generated a ledger of %d payouts in %v: %s", payouts, time.Since(start).Round(time.Second), path)
	return path
}

// schemaKey names the ledger's schema: its version and a digest of its migrations.
func schemaKey(tb testing.TB) string {
	tb.Helper()
	version := ledger.LatestMigration()
	files, err := filepath.Glob("../../ledger/migrations/*.sql")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no migrations found: %v", err)
	}
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(b))
		h.Write(b)
	}
	return fmt.Sprintf("v%d-%s", version, hex.EncodeToString(h.Sum(nil))[:12])
}

// perRun is how many payouts one generated run pays: a nightly payroll file.
const perRun = 1000

// generateLedger fills a new ledger at path through the ledger's own API with what real runs
// leave: per file of perRun rows, a run that records its rows and payouts, sends each (READY,
// SUBMITTING, SUBMITTED with an invoice number) and a reconcile that finds it SUCCEEDED; the
// clock moves on half a day per run.
func generateLedger(tb testing.TB, path string, payouts int) {
	tb.Helper()
	ctx := context.Background()
	clock := time.Date(2022, 1, 3, 1, 0, 0, 0, time.UTC)
	db, err := ledger.Create(ctx, path, ledger.Options{Now: func() time.Time { return clock }})
	if err != nil {
		tb.Fatal(err)
	}
	providers := sandbox.DefaultProviders()
	for start, file := 0, 1; start < payouts; start, file = start+perRun, file+1 {
		n := min(perRun, payouts-start)
		runID := runid.New(clock)
		name := fmt.Sprintf("payroll-%05d.csv", file)
		sum := sha256.Sum256([]byte(name))
		if err := db.AddRun(ctx, ledger.Run{ID: runID, Kind: "run", File: name, FileSHA256: hex.EncodeToString(sum[:]),
			StartedAt: clock, Status: "running", Source: hex.EncodeToString(sum[:]), Rows: n}); err != nil {
			tb.Fatal(err)
		}
		// A run keeps no line its payouts tell (see ledger.DB.RunLines).
		_, fresh := generatedRows(runID, start, n, providers)
		if err := db.Record(ctx, runID, nil, fresh); err != nil {
			tb.Fatal(err)
		}
		if err := db.Apply(ctx, sendChanges(runID, fresh)...); err != nil {
			tb.Fatal(err)
		}
		if err := db.FinishRun(ctx, runID, "finished", 0, clock.Add(time.Minute)); err != nil {
			tb.Fatal(err)
		}
		clock = clock.Add(6 * time.Hour)
		if err := reconcileGenerated(ctx, db, clock, fresh); err != nil {
			tb.Fatal(err)
		}
		clock = clock.Add(6 * time.Hour)
	}
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
}

// generatedRows are the input rows and payouts of one generated file.
func generatedRows(runID string, start, n int, providers []api.Provider) ([]ledger.RunRow, []ledger.Payout) {
	banks := perfBanks()
	rows := make([]ledger.RunRow, n)
	fresh := make([]ledger.Payout, n)
	for j := range n {
		i := start + j
		r := perfRow("GEN", i, banks)
		amount := decimal.RequireFromString(r[4])
		p := providers[i%len(providers)]
		rows[j] = ledger.RunRow{RunID: runID, Line: j + 2, Ref: r[0], Recipient: r[1], ProviderID: p.ID, Bank: p.Name,
			Account: r[3], Amount: amount.StringFixed(2), Description: r[5]}
		fresh[j] = ledger.Payout{Ref: r[0], RunID: runID, Line: j + 2, Recipient: r[1], ProviderID: p.ID, Bank: p.Name,
			Account: r[3], Amount: amount, Description: r[5], State: ledger.Ready}
	}
	return rows, fresh
}

// sendChanges are a run's changes to payouts it sent and the service accepted.
func sendChanges(runID string, fresh []ledger.Payout) []ledger.Change {
	changes := make([]ledger.Change, 0, 2*len(fresh))
	for _, p := range fresh {
		invoice := "INV" + p.Ref
		changes = append(changes,
			ledger.Change{Ref: p.Ref, RunID: runID, From: ledger.Ready, To: ledger.Submitting, CountAttempt: true,
				Detail: fmt.Sprintf("sending %s MYR to %s at provider %d", p.Amount.StringFixed(2), outcome.MaskAccount(p.Account), p.ProviderID)},
			ledger.Change{Ref: p.Ref, RunID: runID, From: ledger.Submitting, To: ledger.Submitted, InvoiceNo: invoice,
				TransactionStatus: api.StatusPending, ResetNotFound: true,
				Detail: fmt.Sprintf("created: invoice %s, status %s", invoice, api.StatusPending)})
	}
	return changes
}

// reconcileGenerated records a reconcile run that finds every payout of fresh SUCCEEDED.
func reconcileGenerated(ctx context.Context, db *ledger.DB, clock time.Time, fresh []ledger.Payout) error {
	runID := runid.New(clock)
	if err := db.AddRun(ctx, ledger.Run{ID: runID, Kind: "reconcile", StartedAt: clock, Status: "running"}); err != nil {
		return err
	}
	changes := make([]ledger.Change, 0, len(fresh))
	for _, p := range fresh {
		changes = append(changes, ledger.Change{Ref: p.Ref, RunID: runID, From: ledger.Submitted, To: ledger.Succeeded,
			TransactionStatus: api.StatusSuccess, Detail: "the service reports SUCCESS"})
	}
	if err := db.Apply(ctx, changes...); err != nil {
		return err
	}
	return db.FinishRun(ctx, runID, "finished", 0, clock.Add(time.Minute))
}

// streamCopy copies the file at from to to without holding it in memory: a grown ledger is large.
func streamCopy(tb testing.TB, from, to string) {
	tb.Helper()
	in, err := os.Open(from)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		tb.Fatal(err)
	}
	if err := out.Close(); err != nil {
		tb.Fatal(err)
	}
}
