package batch_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/ledger"
)

// fakeService is a Service of function fields, for answers the sandbox does not give.
type fakeService struct {
	create func(api.CreatePayoutRequest) (api.CreateResult, error)
	get    func(ref string) (api.Payout, error)
}

var _ batch.Service = (*fakeService)(nil)

func (f *fakeService) ListProviders(context.Context) ([]api.Provider, error) {
	return sandbox.DefaultProviders(), nil
}

func (f *fakeService) CreatePayout(_ context.Context, req api.CreatePayoutRequest) (api.CreateResult, error) {
	return f.create(req)
}

func (f *fakeService) GetPayout(_ context.Context, ref string) (api.Payout, error) {
	return f.get(ref)
}

func TestRunBoundsPerRow(t *testing.T) {
	t.Parallel()
	t.Run("a service that only ever answers 429 gets nothing sent and no endless run", func(t *testing.T) {
		h := batchtest.NewHarness(t, sandbox.Options{})
		var creates atomic.Int32
		svc := &fakeService{
			create: func(api.CreatePayoutRequest) (api.CreateResult, error) {
				creates.Add(1)
				return api.CreateResult{}, &api.Error{Op: "create payout", HTTPStatus: 429, Kind: api.KindRateLimited, RetryAfter: time.Microsecond}
			},
			get: func(string) (api.Payout, error) { return api.Payout{}, &api.Error{Kind: api.KindNotFound} },
		}
		res := h.Run(context.Background(), batchtest.WritePayroll(t, h.Dir, "limited.csv", batchtest.Payroll(2, "LIMITED")),
			func(c *batch.Config) { c.Service = svc })
		if res.ExitCode != exitcode.Attention || res.NotSent != 2 {
			t.Fatalf("result %+v, want exit 4 with both rows not sent", res)
		}
		if n := creates.Load(); n != 60 {
			t.Errorf("%d creates tried, want 30 per row", n)
		}
	})
	t.Run("a row whose sends leave no trace is not sent a sixth time", func(t *testing.T) {
		h := batchtest.NewHarness(t, sandbox.Options{})
		// One payout the service holds, so that lookups are proven to work.
		known := batchtest.Payroll(1, "KNOWN")[0]
		var creates atomic.Int32
		svc := &fakeService{
			create: func(req api.CreatePayoutRequest) (api.CreateResult, error) {
				if req.ExternalInvoiceRef == known.Ref {
					return api.CreateResult{InvoiceNo: "INV-KNOWN", TransactionStatus: "PENDING"}, nil
				}
				creates.Add(1)
				return api.CreateResult{}, &api.Error{Op: "create payout", HTTPStatus: 502, Kind: api.KindOutcomeUnknown}
			},
			get: func(ref string) (api.Payout, error) {
				if ref == known.Ref {
					return api.Payout{ExternalInvoiceRef: ref, PayoutInvoiceNo: "INV-KNOWN", TransactionStatus: "PENDING"}, nil
				}
				return api.Payout{}, &api.Error{Op: "get payout", HTTPStatus: 404, Kind: api.KindNotFound}
			},
		}
		withFake := func(c *batch.Config) { c.Service = svc; c.BreakerThreshold = 1000 }
		if res := h.Run(context.Background(), batchtest.WritePayroll(t, h.Dir, "known.csv", []batchtest.PayrollRow{known}), withFake); res.ExitCode != exitcode.OK {
			t.Fatalf("setup %+v", res)
		}
		rows := batchtest.Payroll(1, "LOST")
		res := h.Run(context.Background(), batchtest.WritePayroll(t, h.Dir, "lost.csv", rows), withFake)
		if res.ExitCode != exitcode.Attention || res.Unknown != 1 {
			t.Fatalf("result %+v, want the row kept UNKNOWN", res)
		}
		if n := creates.Load(); n != 5 {
			t.Errorf("%d creates, want 5", n)
		}
		p, err := h.DB.Get(context.Background(), rows[0].Ref)
		if err != nil || p.State != ledger.Unknown || p.Attempts != 5 {
			t.Errorf("ledger row %+v, %v", p, err)
		}
	})
}

func TestRunClosesRunsOfAKilledProcess(t *testing.T) {
	t.Parallel()
	h := batchtest.NewHarness(t, sandbox.Options{})
	ctx := context.Background()
	if err := h.DB.AddRun(ctx, ledger.Run{ID: "killed", Kind: "run", File: "x.csv", StartedAt: time.Now(), Status: "running"}); err != nil {
		t.Fatal(err)
	}
	h.Run(ctx, batchtest.WritePayroll(t, h.Dir, "next.csv", batchtest.Payroll(1, "NEXT")), nil)
	run, err := h.DB.GetRun(ctx, "killed")
	if err != nil || run.Status != "interrupted" || run.ExitCode != exitcode.Aborted {
		t.Errorf("the killed run reads %+v, %v; want interrupted", run, err)
	}
}

// TestRunRefusesToPayWithoutALedger: no ledger, or a *ledger.DB never opened (nil, as a command
// holds when it opens none), and nothing is sent; a dry run goes on without one.
func TestRunRefusesToPayWithoutALedger(t *testing.T) {
	t.Parallel()
	h := batchtest.NewHarness(t, sandbox.Options{})
	path := batchtest.WritePayroll(t, h.Dir, "noledger.csv", batchtest.Payroll(2, "NOLEDGER"))
	for _, none := range []batch.Ledger{nil, (*ledger.DB)(nil)} {
		_, err := batch.NewRunner(func() batch.Config { c := h.Cfg; c.Ledger = none; return c }()).Run(context.Background(), path)
		if err == nil || h.Sandbox.Stats().Creates != 0 {
			t.Fatalf("ledger %#v: err %v, creates %d: want a refusal and nothing sent", none, err, h.Sandbox.Stats().Creates)
		}
	}
	// A dry run needs none: it checks the file alone.
	c := h.Cfg
	c.Ledger, c.DryRun = (*ledger.DB)(nil), true
	if res, err := batch.NewRunner(c).Run(context.Background(), path); err != nil || res.ExitCode != exitcode.OK {
		t.Errorf("a dry run with a ledger never opened: exit %d, err %v", res.ExitCode, err)
	}
}
