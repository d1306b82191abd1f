package batch_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/reconcile"
	"github.com/payout/payout/ledger"
)

// TestRunCountsOnlySendsThatMayHaveReachedTheService: a connection refused, and an intent whose
// process died before it recorded the answer, leave no trace at the service and do not count
// towards outcome.MaxSendAttempts; only the send the service answered does.
func TestRunCountsOnlySendsThatMayHaveReachedTheService(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("connection refused", func(t *testing.T) {
		h := batchtest.NewHarness(t, sandbox.Options{})
		var refused atomic.Int32
		svc := &fakeService{
			create: func(req api.CreatePayoutRequest) (api.CreateResult, error) {
				if refused.Add(1) <= 3 {
					return api.CreateResult{}, &api.Error{Op: "create payout", Kind: api.KindRetryable, Err: errors.New("connection refused")}
				}
				return h.Client.CreatePayout(ctx, req)
			},
			get: func(ref string) (api.Payout, error) { return h.Client.GetPayout(ctx, ref) },
		}
		rows := batchtest.Payroll(1, "REFUSED")
		res := h.Run(ctx, batchtest.WritePayroll(t, h.Dir, "refused.csv", rows), func(c *batch.Config) { c.Service = svc })
		if res.ExitCode != exitcode.OK {
			t.Fatalf("result %+v", res)
		}
		if p, err := h.DB.Get(ctx, rows[0].Ref); err != nil || p.Attempts != 1 {
			t.Errorf("after 3 refused connections and an accepted send: %+v, %v; want 1 attempt", p, err)
		}
	})
	t.Run("killed between intent and answer", func(t *testing.T) {
		h := batchtest.NewHarness(t, sandbox.Options{})
		rows := batchtest.Payroll(2, "KILLED")
		path := batchtest.WritePayroll(t, h.Dir, "killed.csv", rows)
		recordOnly(h, path)
		// Five kills between the intent and the answer, with nothing sent.
		for i := 0; i < outcome.MaxSendAttempts; i++ {
			if err := h.DB.Apply(ctx, ledger.Change{Ref: rows[0].Ref, From: ledger.Ready, To: ledger.Submitting, Detail: "test: intent, then killed"},
				ledger.Change{Ref: rows[0].Ref, From: ledger.Submitting, To: ledger.Ready, Detail: "test: as if resent after the grace"}); err != nil {
				t.Fatal(err)
			}
		}
		if err := h.DB.Apply(ctx, ledger.Change{Ref: rows[0].Ref, From: ledger.Ready, To: ledger.Submitting, Detail: "test: intent, then killed"}); err != nil {
			t.Fatal(err)
		}
		// Row 0 may be sent again only once a lookup of a payout this run sent has worked
		// (lookup.Session.Proven); on the harness's clock its grace ends as soon as it is waited
		// for, so its lookups after the first, which let row 1 go, wait until row 1 is paid.
		paid := make(chan struct{})
		var once sync.Once
		var lookups atomic.Int32
		svc := &batchtest.HookedService{Client: h.Client, BeforeGet: func(ref string) error {
			if ref == rows[0].Ref && lookups.Add(1) > 1 {
				<-paid
			}
			return nil
		}}
		res := h.Run(ctx, path, func(c *batch.Config) {
			c.Service = svc
			c.Progress = func(done, _ int) {
				if done > 0 {
					once.Do(func() { close(paid) })
				}
			}
		})
		if res.ExitCode != exitcode.OK || len(res.Stuck) != 0 {
			t.Fatalf("result %+v, want the killed row looked up, not found, and sent", res)
		}
		if p, err := h.DB.Get(ctx, rows[0].Ref); err != nil || p.Attempts != 1 || p.State != ledger.Submitted {
			t.Errorf("%+v, %v: want SUBMITTED after 1 counted send", p, err)
		}
		if n := h.Sandbox.CreateCounts()[rows[0].Ref]; n != 1 {
			t.Errorf("%d creates", n)
		}
	})
}

// TestStuckRowIsReleased: a row sent MaxSendAttempts times with no answer and never found is
// stuck; the run, its report and its result say how to free it; Release refuses while the
// service finds it, and otherwise makes it READY for the next run, which sends it.
func TestStuckRowIsReleased(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := batchtest.NewHarness(t, sandbox.Options{})
	known := batchtest.Payroll(1, "HELD")[0]
	var lose atomic.Bool
	lose.Store(true)
	var creates atomic.Int32
	svc := &fakeService{
		create: func(req api.CreatePayoutRequest) (api.CreateResult, error) {
			if req.ExternalInvoiceRef != known.Ref && lose.Load() {
				creates.Add(1)
				return api.CreateResult{}, &api.Error{Op: "create payout", HTTPStatus: 502, Kind: api.KindOutcomeUnknown}
			}
			return h.Client.CreatePayout(ctx, req)
		},
		get: func(ref string) (api.Payout, error) { return h.Client.GetPayout(ctx, ref) },
	}
	withFake := func(c *batch.Config) { c.Service = svc; c.BreakerThreshold = 1000 }
	if res := h.Run(ctx, batchtest.WritePayroll(t, h.Dir, "held.csv", []batchtest.PayrollRow{known}), withFake); res.ExitCode != exitcode.OK {
		t.Fatalf("setup %+v", res)
	}
	rows := batchtest.Payroll(1, "STUCK")
	path := batchtest.WritePayroll(t, h.Dir, "stuck.csv", rows)
	ref := rows[0].Ref
	res := h.Run(ctx, path, withFake)
	want := outcome.StuckMessage(ref, outcome.MaxSendAttempts)
	if res.ExitCode != exitcode.Attention || len(res.Stuck) != 1 || res.Stuck[0].Ref != ref || res.Stuck[0].Attempts != outcome.MaxSendAttempts {
		t.Fatalf("result %+v, want the row stuck", res)
	}
	if n := creates.Load(); n != outcome.MaxSendAttempts {
		t.Errorf("%d creates, want %d", n, outcome.MaxSendAttempts)
	}
	byRef := h.AssertReport(res, 1, batchtest.FileTotal(rows))
	if got := strings.Join(byRef[ref], ","); !strings.Contains(got, want) || strings.Contains(got, "run `payout reconcile` before") {
		t.Errorf("report row %q does not say %q", got, want)
	}
	// A rerun sends nothing and says it again.
	res = h.Run(ctx, path, withFake)
	if len(res.Stuck) != 1 || creates.Load() != outcome.MaxSendAttempts {
		t.Errorf("rerun %+v, %d creates", res, creates.Load())
	}

	runner := batch.NewRunner(func() batch.Config { c := h.Cfg; withFake(&c); return c }())
	if _, err := reconcile.Release(ctx, runner.Config(), ref, "  ", "ops@host"); !errors.Is(err, outcome.ErrReleaseRefused) {
		t.Errorf("release without a reason: %v", err)
	}
	if _, err := reconcile.Release(ctx, runner.Config(), known.Ref, "checked", "ops@host"); !errors.Is(err, outcome.ErrReleaseRefused) {
		t.Errorf("release of a SUBMITTED payout: %v", err)
	}
	// While the service finds it, it is refused and stays UNKNOWN.
	lose.Store(false)
	if _, err := h.Client.CreatePayout(ctx, api.CreatePayoutRequest{VirtualPoolReference: "POOL-1", PayoutServiceID: 1, Amount: decimal.RequireFromString(rows[0].Amount),
		ClientRedirectURL: "http://127.0.0.1:1/r", ClientCallbackURL: "http://127.0.0.1:1/c", ThirdPartyAccountNo: rows[0].Account,
		RecipientReference: "x", PaymentDescription: "x", ExternalInvoiceRef: ref}); err != nil {
		t.Fatal(err)
	}
	if _, err := reconcile.Release(ctx, runner.Config(), ref, "checked", "ops@host"); !errors.Is(err, outcome.ErrReleaseRefused) || !strings.Contains(err.Error(), "payout reconcile") {
		t.Errorf("release of a payout the service has: %v", err)
	}
	if p, _ := h.DB.Get(ctx, ref); p.State != ledger.Unknown {
		t.Errorf("after a refused release: %s", p.State)
	}
}

// TestReleaseMakesAStuckRowReady: not found at the service, a released row is READY, its event
// names who released it and why, and the next run of its file sends it.
func TestReleaseMakesAStuckRowReady(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := batchtest.NewHarness(t, sandbox.Options{})
	rows := batchtest.Payroll(1, "FREE")
	ref := rows[0].Ref
	path := batchtest.WritePayroll(t, h.Dir, "free.csv", rows)
	recordOnly(h, path)
	for i := 0; i < outcome.MaxSendAttempts; i++ {
		changes := []ledger.Change{{Ref: ref, From: ledger.Ready, To: ledger.Submitting, Detail: "test: intent"},
			{Ref: ref, From: ledger.Submitting, To: ledger.Unknown, CountAttempt: true, Detail: "test: no answer"}}
		if i < outcome.MaxSendAttempts-1 {
			changes = append(changes, ledger.Change{Ref: ref, From: ledger.Unknown, To: ledger.Ready, Detail: "test: not found"})
		}
		if err := h.DB.Apply(ctx, changes...); err != nil {
			t.Fatal(err)
		}
	}
	runner := batch.NewRunner(h.Cfg)
	p, err := reconcile.Release(ctx, runner.Config(), ref, "service support confirmed no payout", "ops@host")
	if err != nil || p.State != ledger.Ready {
		t.Fatalf("release: %+v, %v", p, err)
	}
	evs, _ := h.DB.Events(ctx, ref)
	last := evs[len(evs)-1]
	if last.From != ledger.Unknown || last.To != ledger.Ready || !strings.Contains(last.Detail, "released by ops@host") ||
		!strings.Contains(last.Detail, "service support confirmed no payout") {
		t.Errorf("release event %+v", last)
	}
	if _, err := reconcile.Release(ctx, runner.Config(), ref, "again", "ops@host"); !errors.Is(err, outcome.ErrReleaseRefused) {
		t.Errorf("second release: %v", err)
	}
	// Released, it has its sends again: one more send without an answer (a 503) leaves it
	// UNKNOWN, to be looked up, not stuck for good.
	if err := h.DB.Apply(ctx, ledger.Change{Ref: ref, From: ledger.Ready, To: ledger.Submitting, Detail: "test: intent"},
		ledger.Change{Ref: ref, From: ledger.Submitting, To: ledger.Unknown, CountAttempt: true, Detail: "test: 503"}); err != nil {
		t.Fatal(err)
	}
	if p, err := h.DB.Get(ctx, ref); err != nil || p.Attempts != 1 || outcome.Stuck(p) {
		t.Fatalf("after the release and one send with no answer: %+v, %v; want one attempt, not stuck", p, err)
	}
	if err := h.DB.Apply(ctx, ledger.Change{Ref: ref, From: ledger.Unknown, To: ledger.Ready, Detail: "test: not found"}); err != nil {
		t.Fatal(err)
	}
	res := h.Run(ctx, path, nil)
	if res.ExitCode != exitcode.OK || res.Succeeded+res.Pending != 1 {
		t.Fatalf("run after the release %+v", res)
	}
	h.AssertExactlyOnce(rows, res)
}

// recordOnly runs path with a stop before its first request: the run records the file's payouts
// READY and sends nothing.
func recordOnly(h *batchtest.Harness, path string) {
	h.TB.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res := h.Run(ctx, path, func(c *batch.Config) { c.Progress = func(int, int) { cancel() } })
	if res.ExitCode != exitcode.Aborted || res.NotSent != res.Rows || h.Sandbox.Stats().Creates != 0 {
		h.TB.Fatalf("a run stopped before its first request: %+v", res)
	}
}
