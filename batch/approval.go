package batch

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/ledger"
)

// Two-person approval (maker-checker). With the policy on, a run pays a file only when a second
// person approved its plan: the file's SHA-256, rows and total, what it would pay that the ledger
// does not hold yet, and the provider list it was validated against. The maker is the account
// that owns the file: the OS says so without any step of theirs, in cron and folder mode alike,
// and nobody can give a file away without root. The approver must be another account, both when
// approving and when the run checks the approval against the file it is about to pay.

// DefaultApprovalExpiry is how long an approval holds.
const DefaultApprovalExpiry = 7 * 24 * time.Hour

// RunAwaitingApproval is the status of a run that paid nothing because its file awaits approval.
const RunAwaitingApproval = "awaiting-approval"

// ErrApprovalRefused is returned (wrapped) by Decide when the decision may not be recorded: the
// maker approving their own file, or a file that would pay nothing.
var ErrApprovalRefused = errors.New("approval refused")

// ApprovalPolicy says when a file needs a second person's approval before it is paid.
type ApprovalPolicy struct {
	// Require refuses to pay new payouts of a file whose plan nobody else approved (exit 5).
	Require bool
	// Over, when valid, requires an approval only of files whose new payouts total more than it
	// (MYR); it turns the policy on by itself.
	Over decimal.NullDecimal
	// Expiry is how long an approval holds: DefaultApprovalExpiry when 0.
	Expiry time.Duration
	// Actor names the account running the command, Owner the account owning a file: Actor and
	// FileOwner when nil. Tests set them; the command line never does.
	Actor func() string
	Owner func(path string) (string, error)
}

// Required reports whether the policy is on.
func (p ApprovalPolicy) Required() bool { return p.Require || p.Over.Valid }

// ExpiryOrDefault is how long an approval holds under p.
func (p ApprovalPolicy) ExpiryOrDefault() time.Duration {
	if p.Expiry <= 0 {
		return DefaultApprovalExpiry
	}
	return p.Expiry
}

func (p ApprovalPolicy) actor() string {
	if p.Actor != nil {
		return p.Actor()
	}
	return Actor()
}

func (p ApprovalPolicy) owner(path string) (string, error) {
	if p.Owner != nil {
		return p.Owner(path)
	}
	return FileOwner(path)
}

// Plan is what a file would pay, as an approval binds it. Rejected rows are in Rows and, when
// their amount reads as one, in Total; NewPayouts and NewTotal are the valid rows whose reference
// the ledger does not hold: the payouts the run would add.
type Plan struct {
	FileSHA256      string          `json:"file_sha256"`
	Rows            int             `json:"rows"`
	Total           decimal.Decimal `json:"total"`
	Rejected        int             `json:"rejected"`
	NewPayouts      int             `json:"new_payouts"`
	NewTotal        decimal.Decimal `json:"new_total"`
	Providers       int             `json:"providers"`
	ProvidersDigest string          `json:"providers_digest"`
	Digest          string          `json:"digest"`
}

// plan is the file's plan, after validation and the ledger check.
func (sv *survey) plan(sha string, providers []api.Provider) Plan {
	pl := Plan{FileSHA256: sha, Rows: sv.rows, Total: sv.validTotal.Decimal().Add(sv.rejectedTotal.Decimal()), Rejected: sv.rejected,
		NewPayouts: sv.fresh, NewTotal: sv.freshTotal.Decimal()}
	pl.Providers, pl.ProvidersDigest = len(providers), providersDigest(providers)
	pl.Digest = planDigest(pl.FileSHA256, pl.Rows, pl.Total, pl.NewPayouts, pl.NewTotal, pl.ProvidersDigest)
	return pl
}

// providersDigest is the SHA-256 of the provider list, ids and names sorted by id.
func providersDigest(providers []api.Provider) string {
	sorted := slices.Clone(providers)
	slices.SortFunc(sorted, func(a, b api.Provider) int { return cmp.Compare(a.ID, b.ID) })
	h := sha256.New()
	for _, p := range sorted {
		fmt.Fprintf(h, "%d\t%s\n", p.ID, p.Name)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// planDigest is the SHA-256 of a plan's canonical text: one field a line, amounts exact.
func planDigest(sha string, rows int, total decimal.Decimal, newPayouts int, newTotal decimal.Decimal, providers string) string {
	text := fmt.Sprintf("payout plan 1\nfile_sha256 %s\nrows %d\ntotal %s\nnew_payouts %d\nnew_total %s\nproviders %s\n",
		sha, rows, total.String(), newPayouts, newTotal.String(), providers)
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

func approvalRow(path string, pl Plan, decision string) ledger.Approval {
	return ledger.Approval{File: path, FileSHA256: pl.FileSHA256, PlanDigest: pl.Digest, Rows: pl.Rows, Total: pl.Total,
		NewPayouts: pl.NewPayouts, NewTotal: pl.NewTotal, Providers: pl.Providers, ProvidersDigest: pl.ProvidersDigest,
		Decision: decision}
}

// checkApproval gives res the file's plan and, when the policy wants an approval that the file
// does not have, records the refusal and makes res a run that paid nothing (exit 5); it then
// reports true. A file that would add no payout, or whose rejected rows stop it anyway, needs none.
func (r *Runner) checkApproval(ctx context.Context, res *Result, plan Plan) (bool, error) {
	res.Plan = &plan
	pol, log := r.cfg.Approval, r.cfg.Logger.With("run", res.RunID)
	switch {
	case r.cfg.DryRun || !pol.Required() || r.cfg.Ledger == nil:
		return false, nil
	case plan.Rejected > 0 && !r.cfg.AllowPartial, plan.NewPayouts == 0:
		return false, nil
	case pol.Over.Valid && plan.NewTotal.LessThanOrEqual(pol.Over.Decimal):
		log.Info("no approval needed: new payouts at or below --approval-over", "new_total", plan.NewTotal.StringFixed(2))
		return false, nil
	}
	approval, why, err := r.judge(ctx, res.File, plan)
	if err != nil {
		return true, err
	}
	if why != "" {
		return true, r.refuseUnapproved(ctx, res, plan, why)
	}
	if err := r.cfg.Ledger.LinkApproval(ctx, res.RunID, approval.ID); err != nil {
		return true, err
	}
	res.ApprovedBy, res.ApprovedAt = approval.Actor, approval.At.UTC()
	log.Info("file approved", "by", approval.Actor, "at", approval.At)
	return false, nil
}

// judge finds the approval a run of the file at path may go ahead on, or says why there is none.
func (r *Runner) judge(ctx context.Context, path string, plan Plan) (ledger.Approval, string, error) {
	latest, ok, err := r.LatestDecision(ctx, plan.FileSHA256)
	if err != nil {
		return latest, "", err
	}
	if !ok {
		why, err := r.changedSinceApproval(ctx, path, plan)
		return latest, why, err
	}
	by := fmt.Sprintf("%s on %s", latest.Actor, report.FormatTime(latest.At, r.cfg.Zone))
	if latest.Decision == ledger.ApprovalRejected {
		return latest, fmt.Sprintf("REJECTED by %s: %s", by, latest.Reason), nil
	}
	if r.ApprovalExpired(latest) {
		return latest, fmt.Sprintf("the approval by %s expired after %s: it must be approved again", by, r.cfg.Approval.ExpiryOrDefault()), nil
	}
	if void := voids(latest, plan); void != "" {
		return latest, fmt.Sprintf("the approval by %s is void: %s", by, void), nil
	}
	owner, err := r.cfg.Approval.owner(path)
	if err != nil {
		return latest, "", err
	}
	if sameAccount(latest.Actor, owner) || sameAccount(latest.Actor, latest.Maker) {
		return latest, fmt.Sprintf("it was approved by %s, the account that owns it: a second person must approve it", by), nil
	}
	return latest, "", nil
}

// changedSinceApproval says why a file without a decision on its SHA-256 awaits one: nobody
// decided on it, or it changed since someone approved a file of the same name.
func (r *Runner) changedSinceApproval(ctx context.Context, path string, plan Plan) (string, error) {
	list, err := r.cfg.Ledger.Approvals(ctx, "")
	if err != nil {
		return "", err
	}
	for i := len(list) - 1; i >= 0; i-- {
		if a := list[i]; a.File == path && a.Decision == ledger.ApprovalApproved {
			return fmt.Sprintf("the approval by %s on %s is void: the file changed since (SHA-256 %s then, %s now; %d rows, MYR %s then, %d rows, MYR %s now)",
				a.Actor, report.FormatTime(a.At, r.cfg.Zone), a.FileSHA256, plan.FileSHA256,
				a.Rows, a.Total.StringFixed(2), plan.Rows, plan.Total.StringFixed(2)), nil
		}
	}
	return "nobody has approved it", nil
}

// voids says what changed since an approval so that it no longer holds, or "". A rerun that
// resumes an approved file pays fewer new payouts, so those may shrink; nothing else may change.
func voids(a ledger.Approval, now Plan) string {
	var changed []string
	if a.PlanDigest != planDigest(a.FileSHA256, a.Rows, a.Total, a.NewPayouts, a.NewTotal, a.ProvidersDigest) {
		changed = append(changed, "its record does not match its digest")
	}
	if a.Rows != now.Rows {
		changed = append(changed, fmt.Sprintf("rows %d when approved, %d now", a.Rows, now.Rows))
	}
	if !a.Total.Equal(now.Total) {
		changed = append(changed, fmt.Sprintf("total MYR %s when approved, %s now", a.Total.StringFixed(2), now.Total.StringFixed(2)))
	}
	if now.NewPayouts > a.NewPayouts || now.NewTotal.GreaterThan(a.NewTotal) {
		changed = append(changed, fmt.Sprintf("it would now pay %d new payouts, MYR %s, where %d, MYR %s were approved",
			now.NewPayouts, now.NewTotal.StringFixed(2), a.NewPayouts, a.NewTotal.StringFixed(2)))
	}
	if a.ProvidersDigest != now.ProvidersDigest {
		changed = append(changed, fmt.Sprintf("the provider list changed (%d providers when approved, %d now)", a.Providers, now.Providers))
	}
	return strings.Join(changed, "; ")
}

// refuseUnapproved records a run that paid nothing because its file awaits approval, and the
// request for one, with the plan a second person is asked to approve.
func (r *Runner) refuseUnapproved(ctx context.Context, res *Result, plan Plan, why string) error {
	db, now := r.cfg.Ledger, r.cfg.Now()
	run := ledger.Run{ID: res.RunID, Kind: "run", File: res.File, FileSHA256: plan.FileSHA256, StartedAt: res.StartedAt,
		EndedAt: now, Status: RunAwaitingApproval, ExitCode: ExitAwaitingApproval}
	if err := db.AddRun(ctx, run); err != nil {
		return err
	}
	request := approvalRow(res.File, plan, ledger.ApprovalRequested)
	request.Reason, request.Actor, request.RunID, request.At = why, r.cfg.Approval.actor(), res.RunID, now
	if owner, err := r.cfg.Approval.owner(res.File); err == nil {
		request.Maker = owner
	}
	if _, err := db.AddApproval(ctx, request); err != nil {
		return err
	}
	res.ExitCode, res.AwaitingApproval, res.EndedAt = ExitAwaitingApproval, why, now.UTC()
	res.Rows, res.Rejected, res.NotSent, res.TotalAmount = plan.Rows, plan.Rejected, plan.Rows-plan.Rejected, plan.Total
	r.cfg.Logger.Warn("nothing was paid: the file awaits a second person's approval", "run", res.RunID, "file", res.File,
		"why", why, "approve_with", ApproveCommand(res.File))
	return nil
}

// ApproveCommand is the command a second person runs to approve the file at path.
func ApproveCommand(path string) string {
	return "payout approve " + path
}

// LatestDecision is the latest approval or rejection of the file with this SHA-256; false when
// there is none. The latest decision is the one that counts: a rejection voids an approval.
func (r *Runner) LatestDecision(ctx context.Context, sha string) (ledger.Approval, bool, error) {
	list, err := r.cfg.Ledger.Approvals(ctx, sha)
	if err != nil {
		return ledger.Approval{}, false, err
	}
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].Decision != ledger.ApprovalRequested {
			return list[i], true, nil
		}
	}
	return ledger.Approval{}, false, nil
}

// ApprovalExpired reports whether an approval no longer holds by its age.
func (r *Runner) ApprovalExpired(a ledger.Approval) bool {
	return r.cfg.Now().Sub(a.At) > r.cfg.Approval.ExpiryOrDefault()
}

// Decide records a decision on the file at path (`payout approve`, `payout reject`): it computes
// the file's plan exactly as a run would, without paying or recording anything else, and records
// the plan with the decision, the account deciding and the file's owner. The Result is the dry
// run's. The owner of a file may reject it, never approve it (ErrApprovalRefused).
func (r *Runner) Decide(ctx context.Context, path string, approve bool, reason string) (Result, ledger.Approval, error) {
	dry := *r
	dry.cfg.DryRun = true
	res, err := dry.Run(ctx, path)
	if err != nil {
		return res, ledger.Approval{}, err
	}
	if r.cfg.Ledger == nil {
		return res, ledger.Approval{}, errors.New("no ledger: a decision is kept in the ledger the runs read (payout init makes one)")
	}
	plan, pol := *res.Plan, r.cfg.Approval
	row := approvalRow(path, plan, ledger.ApprovalRejected)
	row.Reason, row.Actor, row.At = reason, pol.actor(), r.cfg.Now()
	if row.Maker, err = pol.owner(path); err != nil {
		return res, row, err
	}
	if approve {
		row.Decision = ledger.ApprovalApproved
		if sameAccount(row.Actor, row.Maker) {
			return res, row, fmt.Errorf("%w: %s owns %s, so %s is its maker and cannot approve it: a second person must run `%s`",
				ErrApprovalRefused, accountName(row.Maker), path, accountName(row.Actor), ApproveCommand(path))
		}
		if plan.Rejected > 0 && !r.cfg.AllowPartial {
			return res, row, fmt.Errorf("%w: %d of its %d rows are rejected, so a run would pay nothing: fix the file (or approve with the --allow-partial the run uses)",
				ErrApprovalRefused, plan.Rejected, plan.Rows)
		}
	}
	if row.ID, err = r.cfg.Ledger.AddApproval(ctx, row); err != nil {
		return res, row, err
	}
	return res, row, nil
}

// runApprover names the approval a recorded run went ahead on, for its reports written again.
func runApprover(ctx context.Context, db *ledger.DB, runID string) (string, time.Time, error) {
	a, ok, err := db.RunApproval(ctx, runID)
	if err != nil || !ok {
		return "", time.Time{}, err
	}
	return a.Actor, a.At, nil
}

// NoteAwaitingAt records that the file of a run refused for want of an approval now waits at
// path (folder mode moves it there), so that `payout status` names the file to approve.
func (r *Runner) NoteAwaitingAt(ctx context.Context, runID, sha, path string) error {
	list, err := r.cfg.Ledger.Approvals(ctx, sha)
	if err != nil {
		return err
	}
	for i := len(list) - 1; i >= 0; i-- {
		if a := list[i]; a.RunID == runID && a.Decision == ledger.ApprovalRequested {
			a.File = path
			_, err := r.cfg.Ledger.AddApproval(ctx, a)
			return err
		}
	}
	return nil
}
