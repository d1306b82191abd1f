package batch_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/ledger"
)

// office injects who is who: the account that owns the payout file (its maker) and a clock.
// The command line takes both from the operating system; a test cannot be two OS users.
type office struct {
	h     *batchtest.Harness
	maker string
	now   time.Time
}

func newOffice(t *testing.T) *office {
	return &office{h: batchtest.NewHarness(t, sandbox.Options{}), maker: "alice@payroll-pc",
		now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
}

// config is the harness's run configuration with the approval policy on, run by actor.
func (o *office) config(actor string) batch.Config {
	cfg := o.h.Cfg
	cfg.Now = func() time.Time { return o.now }
	cfg.Approval = batch.ApprovalPolicy{Require: true, Actor: func() string { return actor },
		Owner: func(string) (string, error) { return o.maker, nil }}
	return cfg
}

func (o *office) decide(t *testing.T, path, actor string, approve bool, reason string) (ledger.Approval, error) {
	t.Helper()
	_, a, err := batch.NewRunner(o.config(actor)).Decide(context.Background(), path, approve, reason)
	return a, err
}

func (o *office) approve(t *testing.T, path, actor string) ledger.Approval {
	t.Helper()
	a, err := o.decide(t, path, actor, true, "")
	if err != nil {
		t.Fatalf("%s approves %s: %v", actor, path, err)
	}
	return a
}

// refused runs path as cron would and checks that nothing was paid, for a reason saying want.
func (o *office) refused(t *testing.T, path, want string, edit func(*batch.Config)) batch.Result {
	t.Helper()
	cfg := o.config("cron@server")
	if edit != nil {
		edit(&cfg)
	}
	creates := o.h.Sandbox.Stats().Creates
	res := o.h.Pay(context.Background(), path, cfg)
	if res.ExitCode != batch.ExitAwaitingApproval || !strings.Contains(res.AwaitingApproval, want) {
		t.Fatalf("run of %s: exit %d, awaiting %q; want exit 5 saying %q", path, res.ExitCode, res.AwaitingApproval, want)
	}
	if n := o.h.Sandbox.Stats().Creates - creates; n != 0 {
		t.Fatalf("a run awaiting approval sent %d payouts", n)
	}
	run, err := o.h.DB.GetRun(context.Background(), res.RunID)
	if err != nil || run.Status != batch.RunAwaitingApproval || run.ExitCode != batch.ExitAwaitingApproval {
		t.Fatalf("refused run recorded as %+v (%v), want status %s", run, err, batch.RunAwaitingApproval)
	}
	return res
}

func (o *office) paid(t *testing.T, path string, edit func(*batch.Config)) batch.Result {
	t.Helper()
	res := o.h.Run(context.Background(), path, func(c *batch.Config) {
		*c = o.config("cron@server")
		if edit != nil {
			edit(c)
		}
	})
	if res.ExitCode != batch.ExitOK {
		t.Fatalf("run of %s: exit %d (%s), want 0", path, res.ExitCode, res.AwaitingApproval)
	}
	return res
}

// TestApprovalVoidedByOneChangedAmount: an approval binds the file's plan. One amount changed
// after the approval voids it and nothing is paid; the file as approved is paid, and its reports
// name the approver, also when written again from the ledger.
func TestApprovalVoidedByOneChangedAmount(t *testing.T) {
	o := newOffice(t)
	rows := batchtest.Payroll(3, "APR")
	path := batchtest.WritePayroll(t, o.h.Dir, "payroll.csv", rows)
	o.refused(t, path, "nobody has approved it", nil)
	if _, err := o.h.DB.Get(context.Background(), rows[0].Ref); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("a refused run recorded payout %s: %v", rows[0].Ref, err)
	}

	approval := o.approve(t, path, "bob@finance-pc")
	if approval.NewPayouts != 3 || !approval.NewTotal.Equal(batchtest.FileTotal(rows)) || approval.Maker != o.maker {
		t.Fatalf("approval recorded %+v, want 3 new payouts of %s made by %s", approval, batchtest.FileTotal(rows), o.maker)
	}

	changed := append([]batchtest.PayrollRow(nil), rows...)
	changed[1].Amount = "1001.10"
	batchtest.WritePayroll(t, o.h.Dir, "payroll.csv", changed)
	o.refused(t, path, "is void: the file changed since", nil)

	batchtest.WritePayroll(t, o.h.Dir, "payroll.csv", rows)
	o.now = o.now.Add(time.Hour)
	res := o.paid(t, path, nil)
	o.h.AssertExactlyOnce(rows, res)
	if res.ApprovedBy != "bob@finance-pc" || !res.ApprovedAt.Equal(approval.At) {
		t.Errorf("run approved by %q at %s, want bob@finance-pc at %s", res.ApprovedBy, res.ApprovedAt, approval.At)
	}
	html := reportOf(t, res.Reports, ".report.html")
	if !strings.Contains(html, "bob@finance-pc at 2026-11-24 09:00:00 &#43;00:00") {
		t.Errorf("HTML report does not name the approver:\n%s", html)
	}
	again, err := batch.WriteReports(context.Background(), o.h.DB, res.RunID, t.TempDir(), "", o.now, nil)
	if err != nil {
		t.Fatal(err)
	}
	if html := batchtest.ReadFile(t, again.HTML); !strings.Contains(html, "bob@finance-pc") {
		t.Errorf("report written again from the ledger does not name the approver")
	}

	// Running the paid file again pays nothing new: it needs no second approval.
	if res := o.paid(t, path, nil); res.Submitted != 0 || res.Skipped != len(rows) || res.ApprovedBy != "" {
		t.Errorf("rerun %+v, want every row skipped without an approval", res)
	}
}

// TestApprovalVoidedByAnotherProviderList: the approval binds the provider list the file was
// validated against.
func TestApprovalVoidedByAnotherProviderList(t *testing.T) {
	o := newOffice(t)
	path := batchtest.WritePayroll(t, o.h.Dir, "payroll.csv", batchtest.Payroll(2, "PRV"))
	o.approve(t, path, "bob@finance-pc")
	o.refused(t, path, "the provider list changed", func(c *batch.Config) {
		c.Service = moreProviders{o.h.Client}
	})
	o.paid(t, path, nil)
}

type moreProviders struct{ *api.Client }

func (m moreProviders) ListProviders(ctx context.Context) ([]api.Provider, error) {
	list, err := m.Client.ListProviders(ctx)
	return append(list, api.Provider{ID: 999, Name: "New Bank Berhad"}), err
}

// TestApprovalMakerCannotApproveOwnFile: the account that owns the file may not approve it, and
// an approval by the account that owns the file being paid (a copy it made) does not count.
func TestApprovalMakerCannotApproveOwnFile(t *testing.T) {
	o := newOffice(t)
	path := batchtest.WritePayroll(t, o.h.Dir, "payroll.csv", batchtest.Payroll(2, "OWN"))
	_, err := o.decide(t, path, "alice@laptop", true, "")
	if !errors.Is(err, batch.ErrApprovalRefused) || !strings.Contains(err.Error(), "alice owns") {
		t.Fatalf("maker approving her own file: %v, want refused naming her", err)
	}
	list, err := o.h.DB.Approvals(context.Background(), "")
	if err != nil || len(list) != 0 {
		t.Fatalf("a refused approval was recorded: %+v %v", list, err)
	}
	o.refused(t, path, "nobody has approved it", nil)

	// Withdrawing her own file is fine.
	if _, err := o.decide(t, path, "alice@payroll-pc", false, "wrong month"); err != nil {
		t.Fatalf("maker rejecting her own file: %v", err)
	}
	o.refused(t, path, "REJECTED by alice@payroll-pc on 2026-11-24 09:00:00 +00:00: wrong month", nil)

	o.approve(t, path, "bob@finance-pc")
	o.maker = "bob@server"
	o.refused(t, path, "the account that owns it: a second person must approve it", nil)
	o.maker = "alice@payroll-pc"
	o.paid(t, path, nil)
}

// TestApprovalExpires: an approval holds for the policy's expiry (7 days by default).
func TestApprovalExpires(t *testing.T) {
	o := newOffice(t)
	path := batchtest.WritePayroll(t, o.h.Dir, "payroll.csv", batchtest.Payroll(2, "EXP"))
	o.approve(t, path, "bob@finance-pc")
	o.now = o.now.Add(7*24*time.Hour + time.Minute)
	o.refused(t, path, "expired after 168h0m0s: it must be approved again", nil)
	o.paid(t, path, func(c *batch.Config) { c.Approval.Expiry = 10 * 24 * time.Hour })
}

// TestApprovalLatestDecisionWins: a rejection after an approval stops the file; a later
// approval lets it through again.
func TestApprovalLatestDecisionWins(t *testing.T) {
	o := newOffice(t)
	path := batchtest.WritePayroll(t, o.h.Dir, "payroll.csv", batchtest.Payroll(2, "WIN"))
	o.approve(t, path, "bob@finance-pc")
	if _, err := o.decide(t, path, "carol@audit-pc", false, "account of line 2 is the old one"); err != nil {
		t.Fatal(err)
	}
	o.refused(t, path, "REJECTED by carol@audit-pc", nil)
	o.approve(t, path, "carol@audit-pc")
	if res := o.paid(t, path, nil); res.ApprovedBy != "carol@audit-pc" {
		t.Errorf("approved by %q, want carol@audit-pc", res.ApprovedBy)
	}
}

// TestApprovalThreshold: with --approval-over, files whose new payouts total at most the
// threshold go through without a second person.
func TestApprovalThreshold(t *testing.T) {
	o := newOffice(t)
	rows := batchtest.Payroll(2, "THR")
	path := batchtest.WritePayroll(t, o.h.Dir, "payroll.csv", rows)
	total := batchtest.FileTotal(rows)
	below := func(c *batch.Config) {
		c.Approval.Require = false
		c.Approval.Over = decimal.NewNullDecimal(total.Sub(decimal.RequireFromString("0.01")))
	}
	o.refused(t, path, "nobody has approved it", below)
	res := o.paid(t, path, func(c *batch.Config) {
		c.Approval.Require = false
		c.Approval.Over = decimal.NewNullDecimal(total)
	})
	if res.ApprovedBy != "" || res.Submitted != len(rows) {
		t.Errorf("run under the threshold %+v, want paid without an approval", res)
	}
}

func reportOf(t *testing.T, reports []string, suffix string) string {
	t.Helper()
	for _, p := range reports {
		if strings.HasSuffix(p, suffix) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			return string(data)
		}
	}
	t.Fatalf("no %s among %v", suffix, reports)
	return ""
}
