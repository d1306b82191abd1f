package reconcile_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/batch/reconcile"
	"github.com/payout/payout/ledger"
)

// chunkScenario is a ledger with something of every kind a reconciliation reports: a file paid
// with two rejected rows and some accounts that fail when the service settles, payouts whose
// outcome is unknown and that were never created, and a refusal the service made all the same.
// It returns the file's run and what every row adds up to.
func chunkScenario(b *reconBench) (batch.Result, decimal.Decimal) {
	b.tb.Helper()
	var rows [][3]string
	total := decimal.Zero
	for i := range 17 {
		account := fmt.Sprintf("88%05d", i+1)
		if i%5 == 3 {
			account = fmt.Sprintf("88%02d000", i+1) // fails when settled
		}
		amount := fmt.Sprintf("%d.%02d", 10+i, i)
		rows = append(rows, [3]string{fmt.Sprintf("CHK-%02d", i+1), account, amount})
		total = total.Add(decimal.RequireFromString(amount))
	}
	rows = append(rows, [3]string{"CHK-BAD-1", "8899991", "abc"}, [3]string{"CHK-BAD-2", "8899992", "-5.00"})
	run := b.pay("chunks.csv", rows, func(c *batch.Config) { c.AllowPartial = true })
	if run.Rejected != 2 {
		b.tb.Fatalf("setup run %+v, want the two bad rows rejected", run)
	}
	b.record("CHK-NEVER-1", "8870001", "50.00", ledger.Submitting, ledger.Unknown)
	b.record("CHK-NEVER-2", "8870002", "60.00", ledger.Submitting, ledger.Unknown)
	b.record("CHK-REFUSED", "8870003", "70.00", ledger.Submitting, ledger.Unknown, ledger.Failed)
	if _, err := b.create("CHK-REFUSED", "8870003", "70.00"); err != nil {
		b.tb.Fatal(err)
	}
	b.settle()
	return run, total
}

// reportColumns are the columns of a reconciliation's rows that two ledgers paid alike share
// (run ids and invoice numbers are each ledger's and service's own).
var reportColumns = []string{"line", "ledger_state", "ledger_amount", "service_status", "service_amount", "service_account",
	"mismatches", "message", "name_check"}

// TestReconcileInChunksMatchesOneChunk: a reconciliation whose scope spans several chunks
// reports every payout once, with the same rows, counts and totals as one that holds its scope
// in one chunk, in each scope.
func TestReconcileInChunksMatchesOneChunk(t *testing.T) {
	t.Parallel()
	week := 7 * 24 * time.Hour
	tests := []struct {
		name  string
		opts  func(run batch.Result) reconcile.Options
		rows  int
		extra string // the amount of the rows beyond the file's valid ones (a rejected row's amount counts)
	}{
		{"run", func(run batch.Result) reconcile.Options { return reconcile.Options{RunID: run.RunID} }, 19, "-5.00"},
		{"not final", func(batch.Result) reconcile.Options { return reconcile.Options{FailedWithin: week} }, 20, "180.00"},
		{"since", func(batch.Result) reconcile.Options {
			return reconcile.Options{Since: time.Now().Add(-time.Hour)}
		}, 22, "175.00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var results [2]reconcile.Result
			var reports [2]map[string]map[string]string
			for i, chunk := range []int{3, 0} {
				b := newReconBench(t, sandbox.Faults{})
				run, total := chunkScenario(b)
				runner := b.runner(func(c *batch.Config) { c.ChunkRows = chunk })
				res, err := reconcile.Run(context.Background(), runner.Config(), tt.opts(run))
				if err != nil {
					t.Fatal(err)
				}
				results[i] = res
				reports[i] = reconCSV(t, res, tt.rows, total.Add(decimal.RequireFromString(tt.extra)))
			}
			chunked, whole := results[0], results[1]
			if chunked.Payouts != tt.rows || chunked.LookedUp == 0 {
				t.Errorf("chunked reconcile %+v, want %d payouts looked up", chunked, tt.rows)
			}
			for _, r := range []*reconcile.Result{&chunked, &whole} {
				r.RunID, r.Scope, r.Reports, r.RetryFiles = "", "", nil, nil
			}
			if fmt.Sprintf("%+v", chunked) != fmt.Sprintf("%+v", whole) {
				t.Errorf("in chunks of 3:\n%+v\nin one chunk:\n%+v", chunked, whole)
			}
			if len(results[0].RetryFiles) != len(results[1].RetryFiles) {
				t.Errorf("retry files %v in chunks, %v in one", results[0].RetryFiles, results[1].RetryFiles)
			}
			for ref, want := range reports[1] {
				got, ok := reports[0][ref]
				if !ok {
					t.Errorf("%s: missing from the chunked report", ref)
					continue
				}
				for _, col := range reportColumns {
					if got[col] != want[col] {
						t.Errorf("%s %s: %q in chunks, %q in one chunk", ref, col, got[col], want[col])
					}
				}
			}
		})
	}
}

// TestReconcileInChunksStopsMidway: when the service stops answering in the fourth of seven
// chunks, what the first three found is recorded and reported, every later payout is reported
// not checked, no later chunk is looked up, and the report still ties out.
func TestReconcileInChunksStopsMidway(t *testing.T) {
	t.Parallel()
	b := newReconBench(t, sandbox.Faults{})
	var rows [][3]string
	for i := range 21 {
		rows = append(rows, [3]string{fmt.Sprintf("MID-%02d", i+1), fmt.Sprintf("77%05d", i+1), "10.00"})
	}
	run := b.pay("midway.csv", rows, nil)
	if run.ExitCode != exitcode.OK {
		t.Fatalf("setup run %+v", run)
	}
	b.settle()
	var gets atomic.Int64
	service := &batchtest.HookedService{Client: b.client, BeforeGet: func(string) error {
		if gets.Add(1) > 9 {
			return &api.Error{Op: "get payout", HTTPStatus: 503, Kind: api.KindRetryable}
		}
		return nil
	}}
	runner := b.runner(func(c *batch.Config) {
		c.Service, c.ChunkRows, c.BreakerThreshold, c.MaxLookupErrors = service, 3, 3, 100
	})
	res, err := reconcile.Run(context.Background(), runner.Config(), reconcile.Options{RunID: run.RunID})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != exitcode.Aborted || res.Aborted == "" || res.Payouts != 21 || res.LookedUp != 21 ||
		res.Succeeded != 9 || res.Pending != 12 || res.NotChecked != 12 || res.Changed != 9 {
		t.Fatalf("reconcile %+v, want exit 1 with the 9 payouts of the first 3 chunks settled and the 12 others pending, not checked", res)
	}
	if n := gets.Load(); n > 9+3+int64(b.cfg.Workers) {
		t.Errorf("%d lookups, want none after the breaker stopped the fourth chunk", n)
	}
	byRef := reconCSV(t, res, 21, decimal.RequireFromString("210.00"))
	for i := range 21 {
		ref := fmt.Sprintf("MID-%02d", i+1)
		row := byRef[ref]
		settled := i < 9
		if got := row["ledger_state"] == "SUCCEEDED"; got != settled {
			t.Errorf("%s: %v, want settled %v", ref, row, settled)
		}
		if !settled && (row["mismatches"] != reconcile.MismatchNotChecked || !strings.Contains(row["message"], "reconcile stopped first")) {
			t.Errorf("%s: %v, want it not checked, as the reconcile stopped first", ref, row)
		}
	}
	recRun, err := b.db.GetRun(context.Background(), res.RunID)
	if err != nil || recRun.Status != "aborted" {
		t.Errorf("ledger run %+v (%v), want an aborted reconcile run", recRun, err)
	}
}

// TestReconcileInChunksKeepsWhatLookupsProved: a payout the service accepted and now reports not
// found means "not found" proves nothing for the rest of the reconciliation: an UNKNOWN payout of
// a later chunk stays UNKNOWN rather than being made READY to be sent again.
func TestReconcileInChunksKeepsWhatLookupsProved(t *testing.T) {
	t.Parallel()
	b := newReconBench(t, sandbox.Faults{})
	b.record("GHOST", "6610001", "10.00", ledger.Submitting, ledger.Submitted) // the service never had it
	var rows [][3]string
	for i := range 6 {
		rows = append(rows, [3]string{fmt.Sprintf("PROOF-%d", i+1), fmt.Sprintf("66%05d", i+11), "10.00"})
	}
	if run := b.pay("proof.csv", rows, nil); run.ExitCode != exitcode.OK {
		t.Fatalf("setup run %+v", run)
	}
	b.record("LATE-NEVER", "6610002", "20.00", ledger.Submitting, ledger.Unknown)
	b.settle()
	res, err := reconcile.Run(context.Background(), b.runner(func(c *batch.Config) { c.ChunkRows = 2 }).Config(), reconcile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p := b.state("LATE-NEVER"); p.State != ledger.Unknown {
		t.Errorf("LATE-NEVER %s, want UNKNOWN: a payout known to exist was not found in an earlier chunk", p.State)
	}
	if res.ToResend != 0 || res.Payouts != 8 {
		t.Errorf("reconcile %+v, want 8 payouts and none to send again", res)
	}
}
