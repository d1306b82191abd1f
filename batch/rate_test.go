package batch_test

import (
	"context"
	"testing"
	"time"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/internal/batchtest"
)

// TestRunKeepsTheRate: a run of a second and a half of rows at the rate reaches the service no
// faster than it, in the time of the harness's clock, where the limiter takes its turns and the
// sandbox counts arrivals. The sandbox answers within a microsecond, so that the turns alone set
// the pace: a request that went without its turn would arrive with others at one time.
func TestRunKeepsTheRate(t *testing.T) {
	t.Parallel()
	h := batchtest.NewHarness(t, sandbox.Options{Faults: sandbox.Faults{Latency: time.Microsecond}})
	rows := batchtest.Payroll(3*batchtest.Rate/2, "PACE")
	start := h.Clock.Now()
	res := h.Run(context.Background(), batchtest.WritePayroll(t, h.Dir, "pace.csv", rows), nil)
	if res.ExitCode != exitcode.OK || res.Submitted != len(rows) {
		t.Fatalf("result %+v, want exit 0 with %d submitted", res, len(rows))
	}
	h.AssertExactlyOnce(rows, res)
	h.AssertRate()
	// One turn for the provider list and one a row, each 1/Rate after the last.
	if took, least := h.Clock.Now().Sub(start), time.Duration(len(rows))*time.Second/batchtest.Rate; took < least {
		t.Errorf("the run took %v of the clock, want at least %v: %d requests at %d a second", took, least, len(rows)+1, batchtest.Rate)
	}
}
