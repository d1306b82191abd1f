package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch"
	"github.com/payout/payout/ledger"
)

// envRequireApproval turns the two-person rule on for run and watch, like --require-approval.
const envRequireApproval = "PAYOUT_REQUIRE_APPROVAL"

// approvalOptions are the flags of the two-person rule, shared by run, watch, approve and reject.
type approvalOptions struct {
	registered bool // commands that never pay leave the flags out
	require    optionalBool
	over       string
	expiry     time.Duration
}

func (o *approvalOptions) register(fs *flag.FlagSet) {
	o.registered = true
	fs.Var(&o.require, "require-approval", "pay a file only once a second person (another account than the file's owner) ran `payout approve FILE` (default $"+envRequireApproval+")")
	fs.StringVar(&o.over, "approval-over", "", "require an approval only of files whose new payouts total more than `MYR` (turns --require-approval on)")
	fs.DurationVar(&o.expiry, "approval-expiry", batch.DefaultApprovalExpiry, "how long an approval holds")
}

// policy is the two-person rule as the flags and the environment set it; the identities are the
// operating system's, never a flag's or a variable's.
func (o *approvalOptions) policy(getenv func(string) string) (batch.ApprovalPolicy, error) {
	p := batch.ApprovalPolicy{Require: o.require.value, Expiry: o.expiry}
	if !o.registered {
		return p, nil
	}
	if !o.require.set {
		if v := getenv(envRequireApproval); v != "" {
			on, err := strconv.ParseBool(v)
			if err != nil {
				return p, configError(&ConfigError{Field: envRequireApproval, Value: v, Err: errors.New("want 1, true, 0 or false")})
			}
			p.Require = on
		}
	}
	if o.expiry <= 0 {
		return p, usageError("--approval-expiry %s: want more than 0", o.expiry)
	}
	if o.over != "" {
		over, err := optionalAmount("--approval-over", o.over)
		if err != nil {
			return p, err
		}
		p.Over = decimal.NewNullDecimal(over)
	}
	return p, nil
}

// optionalBool is a boolean flag that knows whether it was given, so that it overrides the
// environment either way.
type optionalBool struct {
	value, set bool
}

func (b *optionalBool) String() string {
	if b == nil {
		return "false"
	}
	return strconv.FormatBool(b.value)
}

func (b *optionalBool) Set(v string) error {
	on, err := strconv.ParseBool(v)
	if err != nil {
		return errors.New("want true or false")
	}
	b.value, b.set = on, true
	return nil
}

func (b *optionalBool) IsBoolFlag() bool { return true }

func approveCmd(ctx context.Context, e *env, args []string) error {
	return decideCmd(ctx, e, args, true)
}

func rejectCmd(ctx context.Context, e *env, args []string) error {
	return decideCmd(ctx, e, args, false)
}

// decideCmd is `payout approve FILE` and `payout reject FILE --reason TEXT`: it shows the file's
// plan as a dry run computes it (validated against the service's provider list and the ledger),
// then records the decision with the account that runs the command. Exit 0: recorded; 2: refused
// (the maker approving their own file, a file that would pay nothing, no reason): nothing was
// recorded; 3: the file cannot be read; 1: the service or the ledger failed.
func decideCmd(ctx context.Context, e *env, args []string, approve bool) error {
	var o runOptions
	var reason string
	name, usage := "approve", "approve [run flags] FILE"
	if !approve {
		name, usage = "reject", "reject --reason TEXT [run flags] FILE"
	}
	fs := newFlagSet(e, name, usage)
	o.register(fs)
	fs.StringVar(&reason, "reason", "", "why: recorded with the decision (required to reject)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usageError("%s: name one file", name)
	}
	path := fs.Arg(0)
	if !approve && strings.TrimSpace(reason) == "" {
		return usageError("reject: --reason is required: say what is wrong with %s, for its maker", path)
	}
	if err := checkInput(path); err != nil {
		return usageError("%s: %v (nothing was recorded)", name, err)
	}
	o.dryRun = true
	s, err := newSession(ctx, e, &o, modeDryRun)
	if err != nil {
		return err
	}
	defer s.close()
	if s.db == nil {
		return usageError("%s: no ledger at %s: the decision is kept in the ledger the runs use (--ledger, $%s, or `payout init`)", name, s.cfg.Ledger, envLedger)
	}
	res, decision, err := s.runner.Decide(ctx, path, approve, reason)
	if res.Plan != nil {
		printSummary(e.stdout, res)
		printPlan(e.stdout, *res.Plan, decision.Maker)
	}
	switch {
	case errors.Is(err, batch.ErrApprovalRefused):
		return usageError("%s %s: %v (nothing was recorded)", name, path, err)
	case err != nil:
		return &exitError{code: batch.ErrorExit(err), err: fmt.Errorf("%s %s: %w (nothing was recorded)", name, path, err)}
	}
	at := humanTime(decision.At, o.zone)
	if approve {
		fmt.Fprintf(e.stdout, "APPROVED by %s at %s: a run with --require-approval pays this plan until %s;\n"+
			"  any change to the file, or to what it would pay, voids the approval.\n",
			decision.Actor, at, humanTime(decision.At.Add(s.runner.Config().Approval.ExpiryOrDefault()), o.zone))
	} else {
		fmt.Fprintf(e.stdout, "REJECTED by %s at %s: %s\n  no run pays this file until someone approves it again.\n", decision.Actor, at, reason)
	}
	return nil
}

// printPlan shows what an approval binds.
func printPlan(w io.Writer, p batch.Plan, maker string) {
	fmt.Fprintf(w, "plan:\n  file SHA-256  %s\n  rows          %d (rejected %d), MYR %s\n", p.FileSHA256, p.Rows, p.Rejected, p.Total.StringFixed(2))
	fmt.Fprintf(w, "  new payouts   %d, MYR %s (valid rows whose reference the ledger does not hold)\n", p.NewPayouts, p.NewTotal.StringFixed(2))
	fmt.Fprintf(w, "  providers     %d (list SHA-256 %s)\n  plan digest   %s\n", p.Providers, p.ProvidersDigest, p.Digest)
	if maker != "" {
		fmt.Fprintf(w, "  maker         %s (owns the file)\n", maker)
	}
}

// printAwaiting adds to a run's summary why it paid nothing and how to have it paid.
func printAwaiting(w io.Writer, res batch.Result) {
	if res.AwaitingApproval == "" {
		return
	}
	fmt.Fprintf(w, "  NOT PAID: the file awaits a second person's approval: %s\n", res.AwaitingApproval)
	if p := res.Plan; p != nil {
		fmt.Fprintf(w, "  plan: %d new payouts, MYR %s; SHA-256 %s\n", p.NewPayouts, p.NewTotal.StringFixed(2), p.FileSHA256)
	}
	fmt.Fprintf(w, "  another account than the file's owner approves it with: %s\n  then run this command again\n", batch.ApproveCommand(res.File))
}

// showAwaiting lists the files whose latest word is a run's request for approval.
func showAwaiting(ctx context.Context, e *env, db *ledger.DB, zone *time.Location) error {
	waiting, err := awaitingFiles(ctx, db)
	if err != nil || len(waiting) == 0 {
		return err
	}
	fmt.Fprintf(e.stdout, "\nfiles awaiting approval, not paid: %d\n", len(waiting))
	for _, a := range waiting {
		fmt.Fprintf(e.stdout, "  %s\n    %d new payouts, MYR %s (%d rows, MYR %s), SHA-256 %s\n    owner %s; run %s at %s: %s\n    approve: %s\n",
			a.File, a.NewPayouts, a.NewTotal.StringFixed(2), a.Rows, a.Total.StringFixed(2), a.FileSHA256,
			a.Maker, a.RunID, humanTime(a.At, zone), a.Reason, batch.ApproveCommand(a.File))
	}
	return nil
}

// awaitingFiles are the latest requests of files that no later run paid and nobody decided on since.
func awaitingFiles(ctx context.Context, db *ledger.DB) ([]ledger.Approval, error) {
	list, err := db.Approvals(ctx, "")
	if err != nil {
		return nil, err
	}
	runs, err := db.Runs(ctx)
	if err != nil {
		return nil, err
	}
	latest := make(map[string]ledger.Approval)
	var order []string
	for _, a := range list {
		if _, seen := latest[a.FileSHA256]; !seen {
			order = append(order, a.FileSHA256)
		}
		latest[a.FileSHA256] = a
	}
	var out []ledger.Approval
	for _, sha := range order {
		a := latest[sha]
		if a.Decision == ledger.ApprovalRequested && !ranSince(runs, sha, a.At) {
			out = append(out, a)
		}
	}
	return out, nil
}

// ranSince reports whether a run of the file went ahead after t (the policy was turned off, or
// the file came under the threshold).
func ranSince(runs []ledger.Run, sha string, t time.Time) bool {
	for _, r := range runs {
		if r.FileSHA256 == sha && r.Kind == "run" && r.Status != batch.RunAwaitingApproval && r.StartedAt.After(t) {
			return true
		}
	}
	return false
}
