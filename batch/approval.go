package batch

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/intake"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/repeats"
	"github.com/payout/payout/batch/runs"
	"github.com/payout/payout/batch/words"
	"github.com/payout/payout/ledger"
)

// Approvals (maker-checker) are judged by package approval; the run asks the judge, records each
// signature it accepted in the chain before it records or sends anything, and pays nothing of a
// file whose plan lacks them.

// judge checks the signatures beside path against plan, as of now, for a policy of need signers.
// Files named like signatures that are none are ignored, each named in a warning.
func (r *Runner) judge(path string, plan intake.Plan, need int) approval.Verdict {
	v := approval.Judge(path, plan.Judged(), need, r.cfg.Approval, r.cfg.Now())
	if r.cfg.Makers != nil {
		v = v.WithoutMakers(r.cfg.Makers(plan.FileSHA256))
	}
	for _, why := range v.Ignored {
		r.cfg.Logger.Warn(why, "file", filepath.Base(path))
	}
	return v
}

// RepeatsVerdict judges the acceptances of held repeats beside the file at path
// (approval.JudgeRepeats) against the plan of every row the file would pay were no row held as a
// repeat, counted like approvals: as many distinct signers as the ledger's policy asks of a plan,
// and at least one, none of them maker nor one of the file's makers (Config.Makers).
func (r *Runner) RepeatsVerdict(ctx context.Context, path, maker string) (approval.Verdict, error) {
	plan, err := r.WithRepeats(repeats.Policy{AllowAll: true}).PlanOf(ctx, path)
	if err != nil {
		return approval.Verdict{}, err
	}
	need := 1
	if r.cfg.Ledger != nil {
		pol, err := approval.CheckedPolicy(ctx, r.cfg.Ledger, r.cfg.Approval.AllowedSigners)
		if err != nil && !approval.PolicyRefused(err) {
			return approval.Verdict{}, err
		}
		need = max(need, pol.Approvals)
	}
	v := approval.JudgeRepeats(path, plan.Judged(), need, maker, r.cfg.Approval, r.cfg.Now())
	if r.cfg.Makers != nil {
		v = v.WithoutMakers(r.cfg.Makers(plan.FileSHA256))
	}
	return v, nil
}

// signaturesNeeded reports whether the ledger's policy asks for signatures: it does when a
// lowering of it does not hold, and checkApproval refuses the file.
func (r *Runner) signaturesNeeded(ctx context.Context) (bool, error) {
	if r.cfg.Ledger == nil {
		return false, nil
	}
	pol, err := approval.CheckedPolicy(ctx, r.cfg.Ledger, r.cfg.Approval.AllowedSigners)
	if approval.PolicyRefused(err) {
		return true, nil
	}
	return pol.Approvals > 0, err
}

// checkApproval gives res the file's plan and, when the ledger's policy asks for signatures that
// the file lacks, makes res a run that paid nothing (exit 5), recording it unless it is a dry run;
// it then reports true. A file that would add no payout, or whose rejected rows stop it anyway,
// needs none. The signatures it accepts are recorded in the chain before anything else of the run.
func (r *Runner) checkApproval(ctx context.Context, res *Result, plan intake.Plan) (bool, error) {
	summary := plan.WithoutText()
	res.Plan = &summary
	db := r.cfg.Ledger
	if db == nil || plan.Unsettled() == 0 || plan.Rejected > 0 && !r.cfg.AllowPartial {
		return false, nil
	}
	pol, err := approval.CheckedPolicy(ctx, db, r.cfg.Approval.AllowedSigners)
	if approval.PolicyRefused(err) {
		// Whatever the signatures beside the file: the policy they would be counted against is
		// not the one the ledger's people set.
		return r.awaiting(ctx, res, plan, err.Error())
	}
	if err != nil || pol.Approvals == 0 {
		return false, err
	}
	v := r.judge(res.File, plan, pol.Approvals)
	if err := r.holdRejection(ctx, res.RunID, plan, &v); err != nil {
		return true, err
	}
	if why := v.Missing(); why != "" {
		return r.awaiting(ctx, res, plan, why)
	}
	principals := make([]string, len(v.Accepted))
	for i, a := range v.Accepted {
		principals[i] = a.Principal()
	}
	res.ApprovedBy, res.ApprovedAt = runs.ApprovedBy(principals), r.cfg.Now().UTC()
	if r.cfg.DryRun {
		return false, nil
	}
	var events []ledger.LedgerEvent
	if _, stored, err := approval.StoredStatement(ctx, db, plan.Digest); err != nil {
		return true, err
	} else if !stored {
		// The statement itself, once: what every send of the plan is proved against, and what
		// an auditor checks the signatures on. It belongs to no run, so that a run's evidence
		// pack carries it as a file of its own, not as a line of its events.
		events = append(events, ledger.LedgerEvent{Kind: ledger.EventPlan,
			Detail:  fmt.Sprintf("plan %s of %d rows, MYR %s", plan.Digest, plan.Payable, plan.Total.StringFixed(2)),
			Facts:   map[string]string{"plan_sha256": plan.Digest, "file_sha256": plan.FileSHA256, "sheet": plan.Sheet, "first_run": res.RunID},
			Payload: string(plan.Text())})
	}
	for _, a := range v.Accepted {
		events = append(events, ledger.LedgerEvent{RunID: res.RunID, Kind: ledger.EventApproved,
			Detail: fmt.Sprintf("plan signed by %s (%s), valid until %s", a.Principal(), a.Fingerprint, a.ValidUntil.Format(time.DateOnly)),
			Facts: map[string]string{"principal": a.Principal(), "fingerprint": a.Fingerprint, "plan_sha256": plan.Digest,
				"sig_sha256": a.SHA256, "sig_file": a.File, "file_sha256": plan.FileSHA256, "sheet": plan.Sheet,
				"valid_until": a.ValidUntil.Format(time.DateOnly), "signature": string(a.Signature)}})
	}
	if _, err := db.AppendLedgerEvents(ctx, events...); err != nil {
		return true, err
	}
	r.cfg.Logger.Info("file approved", "run", res.RunID, "by", res.ApprovedBy, "policy", pol.Approvals)
	return false, nil
}

// awaiting makes res a run that pays nothing for why (exit 5), recorded unless it is a dry run,
// which only reports it.
func (r *Runner) awaiting(ctx context.Context, res *Result, plan intake.Plan, why string) (bool, error) {
	if r.cfg.DryRun {
		res.AwaitingApproval = why
		if res.ExitCode == exitcode.OK {
			res.ExitCode = exitcode.AwaitingApproval
		}
		return false, nil
	}
	return true, r.refuseUnapproved(ctx, res, plan, why)
}

// holdRejection makes a refusal outlast its files, which anyone who may write the folder could
// delete: the first run that meets a valid refusal beside a file records it in the chain (a dry
// run does not), and every later run of the same plan or bytes is refused on that record.
func (r *Runner) holdRejection(ctx context.Context, runID string, plan intake.Plan, v *approval.Verdict) error {
	db := r.cfg.Ledger
	recorded, err := db.LedgerEvents(ctx, ledger.EventFilter{Kind: ledger.EventRejected, PlanSHA256: plan.Digest, FileSHA256: plan.FileSHA256})
	switch {
	case err != nil:
		return err
	case len(recorded) > 0 && v.Rejected == "":
		e := recorded[0]
		v.Rejected = fmt.Sprintf("%s (recorded by event %d of %s; change the file to have it signed again)",
			e.Facts["rejected"], e.ID, words.FormatTime(e.At, r.cfg.Zone))
	case len(recorded) == 0 && v.Rejected != "" && !r.cfg.DryRun:
		_, err = db.AppendLedgerEvents(ctx, ledger.LedgerEvent{RunID: runID, Kind: ledger.EventRejected,
			Detail: "plan REJECTED by " + v.Rejected, Facts: map[string]string{"rejected": v.Rejected,
				"plan_sha256": plan.Digest, "file_sha256": plan.FileSHA256, "sheet": plan.Sheet,
				"statement": string(v.Refusal.Statement), "signature": string(v.Refusal.Signature)}})
	}
	return err
}

// refuseUnapproved records a run that paid nothing because its file lacks signatures.
func (r *Runner) refuseUnapproved(ctx context.Context, res *Result, plan intake.Plan, why string) error {
	now := r.cfg.Now()
	run := ledger.Run{ID: res.RunID, Kind: ledger.KindRun, File: res.File, FileSHA256: plan.FileSHA256, StartedAt: res.StartedAt,
		EndedAt: now, Status: ledger.RunAwaitingApproval, ExitCode: exitcode.AwaitingApproval}
	if err := r.cfg.Ledger.AddRun(ctx, run); err != nil {
		return err
	}
	res.ExitCode, res.AwaitingApproval, res.EndedAt = exitcode.AwaitingApproval, why, now
	res.Rows, res.Rejected, res.NotSent, res.TotalAmount = plan.Rows, plan.Rejected, plan.Rows-plan.Rejected, plan.FileTotal()
	r.cfg.Logger.Warn("nothing was paid: the file's plan lacks signatures", "run", res.RunID, "file", res.File,
		"why", why, "approve_with", approval.Command(res.File))
	return nil
}

// PlanOf reads and validates the file at path exactly as a run would (against the service's
// provider list, one pass over the rows), records and sends nothing, and returns its plan. A
// file-level problem is a *read.FileError.
func (r *Runner) PlanOf(ctx context.Context, path string) (intake.Plan, error) {
	sum, err := read.FileSHA256(path)
	if err != nil {
		return intake.Plan{}, err
	}
	providers, err := r.providers(ctx)
	if err != nil {
		if api.KindOf(err) == api.KindNone {
			err = fmt.Errorf("list providers: %w", err)
		}
		return intake.Plan{}, outcome.ExplainAuth(err)
	}
	opts := r.intake(path, providers)
	opts.PlanText = true
	sv, err := intake.SurveyFile(ctx, opts)
	if err != nil {
		return intake.Plan{}, err
	}
	if err := sv.SameFile(sum); err != nil {
		return intake.Plan{}, err
	}
	return sv.Plan(), nil
}
