package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/atomicfile"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/intake"
	"github.com/payout/payout/batch/signature"
	"github.com/payout/payout/ledger"
)

// envRequireApproval is refused: the approval policy lives in the ledger.
const envRequireApproval = "PAYOUT_REQUIRE_APPROVAL"

// errPolicyInLedger is what a removed approval flag or variable says.
var errPolicyInLedger = errors.New("the approval policy is in the ledger now, not in a flag or variable of run or watch: see `payout policy`, and sign a file's plan with `payout approve FILE`")

// maxPlanShown is the most rows whose statement approve and reject print before signing; a
// longer plan is read with payout plan.
const maxPlanShown = 200

// sigMode is the mode of the signature files written beside an input: they hold no account number.
const sigMode = 0o644

// approvalOptions refuses the flags that once set the two-person rule per command.
type approvalOptions struct{}

func (o *approvalOptions) register(fs *flag.FlagSet) {
	for _, name := range []string{"require-approval", "approval-over", "approval-expiry"} {
		fs.Var(refusedFlag{errPolicyInLedger}, name, "refused: the approval policy is in the ledger (payout policy)")
	}
}

// refusedFlag is a flag that is no longer taken: given, it fails with err. Help leaves it out and
// no mistyped flag is corrected to it; the error tells whoever still gives it what replaced it.
type refusedFlag struct{ err error }

func (f refusedFlag) String() string   { return "" }
func (f refusedFlag) Set(string) error { return f.err }

// IsBoolFlag lets the flag be given alone, as the switches it replaced were: it then never takes
// the file name after it as its value.
func (f refusedFlag) IsBoolFlag() bool { return true }

func isRefusedFlag(f *flag.Flag) bool {
	_, refused := f.Value.(refusedFlag)
	return refused
}

// policy is who may sign, from the environment; how many must sign is the ledger's.
func (o *approvalOptions) policy(getenv func(string) string) (approval.Policy, error) {
	if v := getenv(envRequireApproval); v != "" {
		return approval.Policy{}, configError(&ConfigError{Field: envRequireApproval, Value: v, Err: errPolicyInLedger})
	}
	return approval.Policy{AllowedSigners: getenv(approval.EnvAllowedSigners)}, nil
}

// planFlags are the flags of plan, approve and reject beside the run's.
type planFlags struct {
	validUntil string
	key        string
	reason     string
	// acceptRepeats signs the plan of every row, held repeats included, as their acceptance.
	acceptRepeats bool
}

// planSession reads the file's plan exactly as a run would, with the run's flags.
func planSession(ctx context.Context, e *env, name, usage string, args []string, extra func(*flag.FlagSet, *planFlags)) (*session, intake.Plan, planFlags, string, error) {
	var o runOptions
	var pf planFlags
	fs := newFlagSet(e, name, usage)
	o.register(fs)
	fs.StringVar(&o.providers, "providers", "", "read the provider list from `FILE` (saved by payout providers --json) instead of asking the service: a signer needs no merchant token")
	fs.StringVar(&pf.validUntil, "valid-until", "", "last day (YYYY-MM-DD, UTC) a run accepts the signature (default and latest: 7 days from today)")
	if extra != nil {
		extra(fs, &pf)
	}
	if err := parseFlags(fs, args); err != nil {
		return nil, intake.Plan{}, pf, "", err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return nil, intake.Plan{}, pf, "", usageError("%s: name one file", name)
	}
	path := fs.Arg(0)
	if err := checkInput(path); err != nil {
		return nil, intake.Plan{}, pf, "", usageError("%s: %v", name, err)
	}
	// A plan is read, never paid or reported: no report folder, and an existing ledger only read.
	o.dryRun, o.reportDir = true, ""
	// Accepted repeats are paid as rows like any other: their plan holds none back.
	o.repeats.allowAll = o.repeats.allowAll || pf.acceptRepeats
	s, err := newSession(ctx, e, &o, modeDryRun)
	if err != nil {
		return nil, intake.Plan{}, pf, "", err
	}
	plan, err := s.runner.PlanOf(ctx, path)
	if err != nil {
		s.close()
		return nil, plan, pf, "", &exitError{code: exitcode.OfError(err), err: fmt.Errorf("%s %s: %w", name, path, err)}
	}
	return s, plan, pf, path, nil
}

// validUntil is the day a signature made now holds through.
func (pf planFlags) day(now time.Time) (time.Time, error) {
	today := now.UTC().Truncate(24 * time.Hour)
	last := today.Add(approval.DefaultValidity)
	if pf.validUntil == "" {
		return last, nil
	}
	d, err := time.Parse(time.DateOnly, pf.validUntil)
	if err != nil || d.Before(today) || d.After(last) {
		return d, usageError("--valid-until %q: want a date YYYY-MM-DD from %s to %s", pf.validUntil, today.Format(time.DateOnly), last.Format(time.DateOnly))
	}
	return d, nil
}

// planCmd is `payout plan FILE`: it prints the file's plan statement, the text a signer signs.
func planCmd(ctx context.Context, e *env, args []string) error {
	s, plan, pf, _, err := planSession(ctx, e, "plan", "plan [--sheet NAME] [--valid-until DATE] [run flags] FILE", args, nil)
	if err != nil {
		return err
	}
	defer s.close()
	day, err := pf.day(time.Now())
	if err != nil {
		return err
	}
	if err := plan.WriteStatement(e.stdout, day); err != nil {
		return err
	}
	// Beside the statement, not in it: stdout is what is signed, often through a pipe.
	printBanks(e.stderr, "# ", plan)
	return nil
}

func approveCmd(ctx context.Context, e *env, args []string) error {
	return signCmd(ctx, e, args, true)
}

func rejectCmd(ctx context.Context, e *env, args []string) error {
	return signCmd(ctx, e, args, false)
}

// signCmd is `payout approve FILE [--key KEY]` and `payout reject FILE --reason TEXT`: it shows
// the file's plan as a run computes it, signs its statement (or a refusal of it) with the key or
// the ssh agent, and writes the signature beside the file as FILE.<principal>.sig (a refusal
// also as FILE.<principal>.reject). On a terminal it asks first. Nothing is written to the ledger.
func signCmd(ctx context.Context, e *env, args []string, approve bool) error {
	name, usage := "approve", "approve [--accept-repeats] [--key KEY] [--valid-until DATE] [run flags] FILE"
	if !approve {
		name, usage = "reject", "reject --reason TEXT [--key KEY] [run flags] FILE"
	}
	s, plan, pf, path, err := planSession(ctx, e, name, usage, args, func(fs *flag.FlagSet, pf *planFlags) {
		fs.StringVar(&pf.key, "key", "", "your OpenSSH private key file, or its .pub with the key in the ssh agent (default: the agent's key that the allowed signers list)")
		fs.StringVar(&pf.reason, "reason", "", "why the plan is refused (reject)")
		if approve {
			fs.BoolVar(&pf.acceptRepeats, "accept-repeats", false, "accept the file's rows held as possible repeats (folder mode): sign its plan, repeats included,\n"+
				"as "+signature.NamespaceRepeat+", into FILE.<you>.repeats.sig; someone other than the file's maker must")
		}
	})
	if err != nil {
		return err
	}
	defer s.close()
	if !approve && strings.TrimSpace(pf.reason) == "" {
		return usageError("reject: --reason is required: say what is wrong with %s, for its maker", path)
	}
	day, err := pf.day(time.Now())
	if err != nil {
		return err
	}
	allowed, err := loadAllowed(e)
	if err != nil {
		return err
	}
	printPlan(e.stdout, plan, path)
	if plan.Rows <= maxPlanShown {
		if err := plan.WriteStatement(e.stdout, day); err != nil {
			return err
		}
	}
	key, id, err := signingKey(ctx, e, pf.key, allowed)
	if err != nil {
		return err
	}
	defer key.Close()
	verb := "APPROVE"
	switch {
	case !approve:
		verb = "REJECT"
	case pf.acceptRepeats:
		verb = "ACCEPT the repeats held in"
	}
	if !confirm(e, fmt.Sprintf("%s this plan as %s (%s)? [y/N] ", verb, id.Principal(), id.Fingerprint)) {
		return usageError("%s: not confirmed: nothing was signed", name)
	}
	base := path + "." + safeName(id.Principal())
	if !approve {
		statement := plan.RefusalStatement(pf.reason)
		sig, err := signature.Sign(ctx, strings.NewReader(string(statement)), signature.NamespaceReject, key)
		if err != nil {
			return &exitError{code: exitAborted, err: err}
		}
		if err := writeSigned(base+approval.RefusalSuffix, statement, sig); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "REJECTED by %s: %s\n  wrote %s and %s%s: no run pays this file while they are beside it.\n",
			id.Principal(), pf.reason, base+approval.RefusalSuffix, base+approval.RefusalSuffix, approval.SigSuffix)
		return nil
	}
	namespace := signature.NamespacePlan
	if pf.acceptRepeats {
		namespace, base = signature.NamespaceRepeat, base+".repeats"
	}
	sig, err := signature.Sign(ctx, plan.Statement(day), namespace, key)
	if err != nil {
		return &exitError{code: exitAborted, err: err}
	}
	if err := atomicfile.WriteBytes(base+approval.SigSuffix, sigMode, sig); err != nil {
		return &exitError{code: exitAborted, err: fmt.Errorf("approve: %w", err)}
	}
	fmt.Fprintf(e.stdout, "SIGNED by %s (%s), valid until %s: wrote %s\n  any change to the file, its sheet or what it pays voids the signature.\n",
		id.Principal(), id.Fingerprint, day.Format(time.DateOnly), base+approval.SigSuffix)
	return nil
}

func writeSigned(path string, statement, sig []byte) error {
	if err := atomicfile.WriteBytes(path, sigMode, statement); err != nil {
		return &exitError{code: exitAborted, err: err}
	}
	if err := atomicfile.WriteBytes(path+approval.SigSuffix, sigMode, sig); err != nil {
		return &exitError{code: exitAborted, err: err}
	}
	return nil
}

// loadAllowed reads $PAYOUT_ALLOWED_SIGNERS: exit 2 when it is not set or unsafe.
func loadAllowed(e *env) (*signature.AllowedSigners, error) {
	path := e.getenv(approval.EnvAllowedSigners)
	if path == "" {
		return nil, configError(&ConfigError{Field: approval.EnvAllowedSigners, Err: errors.New("not set: name the allowed_signers file that lists who may sign")})
	}
	a, err := signature.LoadAllowedSigners(path)
	if err != nil {
		return nil, configError(&ConfigError{Field: approval.EnvAllowedSigners, Value: path, Err: err})
	}
	return a, nil
}

// signingKey is the key to sign with, and whose it is by the allowed signers: the --key file, or
// the agent's one key that they list.
func signingKey(ctx context.Context, e *env, path string, allowed *signature.AllowedSigners) (*signature.Key, signature.Identity, error) {
	var keys []*signature.Key
	if path != "" {
		k, err := signature.LoadKey(ctx, path, e.getenv)
		if err != nil {
			return nil, signature.Identity{}, usageError("%v", err)
		}
		keys = []*signature.Key{k}
	} else {
		var err error
		if keys, err = signature.AgentKeys(ctx, e.getenv); err != nil {
			return nil, signature.Identity{}, usageError("%v", err)
		}
	}
	now := time.Now()
	for i, k := range keys {
		probe, err := signature.Sign(ctx, strings.NewReader("probe"), signature.NamespacePlan, k)
		if err != nil {
			continue
		}
		// The agent's keys share its connection: the one returned keeps it open.
		if id, err := signature.Verify([]byte("probe"), probe, signature.NamespacePlan, allowed, now); err == nil {
			return keys[i], id, nil
		}
	}
	if len(keys) > 0 {
		keys[0].Close()
	}
	return nil, signature.Identity{}, usageError("none of your keys (%d tried) is listed in %s for namespace %s: ask its administrator to add yours, or name it with --key",
		len(keys), allowed.Path, signature.NamespacePlan)
}

// safeName makes a principal fit a file name.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 || r == ',' || r == ' ' {
			return '_'
		}
		return r
	}, s)
}

// confirm asks on a terminal; elsewhere (a script, a pipe) the command itself was the intent.
func confirm(e *env, question string) bool {
	f, ok := e.stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return true
	}
	fmt.Fprint(e.stdout, question)
	answer, _ := bufio.NewReader(f).ReadString('\n')
	answer = strings.ToLower(strings.TrimSpace(answer))
	return answer == "y" || answer == "yes"
}

// printPlan shows what a signature binds.
func printPlan(w io.Writer, p intake.Plan, path string) {
	sheet := p.Sheet
	if sheet == "" {
		sheet = "-"
	}
	fmt.Fprintf(w, "plan:\n  file SHA-256  %s\n  sheet         %s\n  rows          %d (payable %d, rejected %d), MYR %s payable\n", p.FileSHA256, sheet, p.Rows, p.Payable, p.Rejected, p.Total.StringFixed(2))
	fmt.Fprintf(w, "  new payouts   %d, MYR %s (payable rows whose reference the ledger here does not hold)\n  plan SHA-256  %s\n", p.NewPayouts, p.NewTotal.StringFixed(2), p.Digest)
	printBanks(w, "  ", p)
	fmt.Fprintf(w, "  every row, as signed: payout plan %s\n", path)
}

// printBanks names the banks a plan's rows pay next to the provider ids its statement gives
// them, one a line after prefix: a signer checks names, not ids.
func printBanks(w io.Writer, prefix string, p intake.Plan) {
	banks := p.Banks()
	if len(banks) == 0 {
		return
	}
	fmt.Fprintf(w, "%sbanks (the provider id in each row of the statement):\n", prefix)
	for _, b := range banks {
		fmt.Fprintf(w, "%s  %4d  %s\n", prefix, b.ID, b.Name)
	}
}

// printAwaiting adds to a run's summary why it paid nothing and how to have it paid.
func printAwaiting(w io.Writer, res batch.Result) {
	if res.AwaitingApproval == "" {
		return
	}
	if res.NotProved {
		fmt.Fprintf(w, "  NOT SENT: %s\n", res.AwaitingApproval)
		return
	}
	fmt.Fprintf(w, "  NOT PAID: the file's plan lacks signatures: %s\n", res.AwaitingApproval)
	if p := res.Plan; p != nil {
		fmt.Fprintf(w, "  plan: %d new payouts, MYR %s; file SHA-256 %s; plan SHA-256 %s\n", p.NewPayouts, p.NewTotal.StringFixed(2), p.FileSHA256, p.Digest)
	}
	fmt.Fprintf(w, "  each signer signs it with: %s\n    (or: payout plan %s | ssh-keygen -Y sign -f KEY -n payout-plan > %s.NAME.sig)\n  then run this command again\n",
		approval.Command(res.File), res.File, filepath.Base(res.File))
}

// showAwaiting lists the files whose latest run paid nothing for want of signatures, and the policy.
func showAwaiting(ctx context.Context, e *env, db *ledger.DB, zone *time.Location) error {
	pol, err := db.ApprovalPolicy(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\napproval policy: %s\n", policyText(pol, zone))
	runs, err := db.FindRuns(ctx, ledger.RunFilter{})
	if err != nil {
		return err
	}
	latest := make(map[string]ledger.Run)
	var order []string
	for _, r := range runs {
		if r.Kind != ledger.KindRun {
			continue
		}
		if _, seen := latest[r.FileSHA256]; !seen {
			order = append(order, r.FileSHA256)
		}
		if old, ok := latest[r.FileSHA256]; !ok || !r.StartedAt.Before(old.StartedAt) {
			latest[r.FileSHA256] = r
		}
	}
	var waiting []ledger.Run
	for _, sha := range order {
		if r := latest[sha]; r.Status == ledger.RunAwaitingApproval {
			waiting = append(waiting, r)
		}
	}
	if len(waiting) == 0 {
		return nil
	}
	fmt.Fprintf(e.stdout, "files awaiting signatures, not paid: %d\n", len(waiting))
	for _, r := range waiting {
		fmt.Fprintf(e.stdout, "  %s\n    SHA-256 %s; run %s at %s\n    sign: %s\n", r.File, r.FileSHA256, r.ID, humanTime(r.StartedAt, zone), approval.Command(r.File))
	}
	return nil
}
