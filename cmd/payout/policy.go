package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/signature"
	"github.com/payout/payout/batch/untrusted"
	"github.com/payout/payout/ledger"
)

// policyStatement is the statement that lowers current to approvals (approval.PolicyStatement).
func policyStatement(approvals int, current ledger.ApprovalPolicy) []byte {
	return approval.PolicyStatement(approvals, ledger.PolicyRef(current.Event))
}

// policyText describes a policy for people.
func policyText(p ledger.ApprovalPolicy, zone *time.Location) string {
	if p.Event.ID == 0 {
		return "no approval needed (never set: payout policy --approvals N)"
	}
	need := "no approval needed"
	if p.Approvals > 0 {
		need = fmt.Sprintf("each file's plan needs %d signatures by %d distinct signers", p.Approvals, p.Approvals)
	}
	return fmt.Sprintf("%s (event %d, %s, by %s)", need, p.Event.ID, humanTime(p.Event.At, zone), p.Event.Actor)
}

// sigList is a repeatable flag of signature files.
type sigList []string

func (l *sigList) String() string     { return strings.Join(*l, ",") }
func (l *sigList) Set(v string) error { *l = append(*l, v); return nil }

// policyCmd is `payout policy`: it shows the ledger's approval policy; with --approvals N it sets
// it. Raising it (or keeping it) needs nothing but the ledger; lowering it needs signatures of
// the policy statement (--statement prints it) by as many distinct signers as the policy in force
// asks, given with --sig. Every change is an event of the chain.
func policyCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "policy", "policy [--approvals N [--statement | --sig FILE...]] [--ledger FILE]")
	ledgerFlag := new(string)
	addLedgerFlag(fs, ledgerFlag)
	var tz zoneOption
	tz.register(fs)
	approvals := fs.Int("approvals", -1, "set the number of distinct signers each file's plan needs")
	statement := fs.Bool("statement", false, "print the policy statement that signers sign to lower the policy to --approvals, and change nothing")
	var sigs sigList
	fs.Var(&sigs, "sig", "a signature (namespace payout-policy) of the policy statement, as ssh-keygen -Y sign writes it; repeat for each signer")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return usageError("policy: unexpected argument %q", fs.Arg(0))
	}
	zone, err := tz.location(e.getenv)
	if err != nil {
		return err
	}
	db, err := openLedgerAt(ctx, ledgerPath(e, *ledgerFlag))
	if err != nil {
		return err
	}
	defer db.Close()
	current, err := db.ApprovalPolicy(ctx)
	if err != nil {
		return &exitError{code: exitAborted, err: err}
	}
	// A lowering that does not hold refuses every run; raising the policy back is what ends it.
	_, unsigned := approval.CheckedPolicy(ctx, db, e.getenv(approval.EnvAllowedSigners))
	var refused *approval.PolicyError
	if !errors.As(unsigned, &refused) {
		refused = nil
	}
	switch {
	case refused != nil && (*approvals < 0 || *approvals < refused.Was):
		if *approvals < 0 {
			fmt.Fprintf(e.stdout, "approval policy: %s\n", policyText(current, zone))
		}
		return &exitError{code: exitcode.AwaitingApproval, err: refused}
	case *approvals < 0 && (*statement || len(sigs) > 0):
		return usageError("policy: --statement and --sig go with --approvals N")
	case *approvals < 0:
		fmt.Fprintf(e.stdout, "approval policy: %s\n", policyText(current, zone))
		return nil
	case *statement:
		_, err := e.stdout.Write(policyStatement(*approvals, current))
		return err
	}
	return setPolicy(ctx, e, db, current, *approvals, sigs, zone)
}

// setPolicy records a new policy: freely when it asks as much or more, with the signatures of as
// many distinct signers as the policy in force asks when it asks less.
func setPolicy(ctx context.Context, e *env, db *ledger.DB, current ledger.ApprovalPolicy, n int, sigs []string, zone *time.Location) error {
	facts := map[string]string{"approvals": strconv.Itoa(n), "was": strconv.Itoa(current.Approvals), ledger.FactReplaces: ledger.PolicyRef(current.Event)}
	detail := fmt.Sprintf("approval policy: %d signers (was %d)", n, current.Approvals)
	if n < current.Approvals {
		statement := policyStatement(n, current)
		signers, signed, err := policySigners(e, statement, sigs, current.Approvals)
		if err != nil {
			return err
		}
		// The statement and the signatures themselves, which every run checks again: a name
		// alone could be written by anyone who may write the ledger.
		facts["signed_by"], facts["statement"], facts["signatures"] = signers, string(statement), approval.JoinSignatures(signed)
		detail += ", lowered with the signatures of " + signers
	}
	if _, err := db.AppendLedgerEvents(ctx, ledger.LedgerEvent{Kind: ledger.EventPolicy, Detail: detail, Facts: facts}); err != nil {
		if errors.Is(err, ledger.ErrPolicyChanged) {
			return usageError("policy: %v: nothing was changed", err)
		}
		return &exitError{code: exitAborted, err: err}
	}
	now, err := db.ApprovalPolicy(ctx)
	if err != nil {
		return &exitError{code: exitAborted, err: err}
	}
	fmt.Fprintf(e.stdout, "approval policy: %s\n", policyText(now, zone))
	return nil
}

// policySigners checks the signatures of a lowering and names its distinct signers, with the
// signatures that count; exit 5 when they are fewer than need.
func policySigners(e *env, statement []byte, files []string, need int) (string, [][]byte, error) {
	allowed, err := loadAllowed(e)
	if err != nil {
		return "", nil, err
	}
	var signed [][]byte
	var accepted []approval.Approval
	var notCounted []string
	for _, f := range files {
		data, err := untrusted.ReadSmall(f, maxSignatureFile)
		var id signature.Identity
		if err == nil {
			id, err = signature.Verify(statement, data, signature.NamespacePolicy, allowed, time.Now())
		}
		if err != nil {
			notCounted = append(notCounted, f+": "+err.Error())
			continue
		}
		accepted = append(accepted, approval.Approval{Identity: id, File: f})
		signed = append(signed, data)
	}
	v := approval.Verdict{Need: need, Accepted: accepted, Signers: approval.DistinctSigners(accepted), NotCounted: notCounted}
	if why := v.Missing(); why != "" {
		var b bytes.Buffer
		fmt.Fprintf(&b, "policy: lowering the policy %s; nothing was changed. Each signer signs the statement of `payout policy --statement --approvals N` with ssh-keygen -Y sign -n %s", why, signature.NamespacePolicy)
		return "", nil, &exitError{code: exitcode.AwaitingApproval, err: errors.New(b.String())}
	}
	return v.ApprovedBy(), signed, nil
}

// openLedgerAt opens an existing ledger for a command that changes it.
func openLedgerAt(ctx context.Context, path string) (*ledger.DB, error) {
	db, err := ledger.Open(ctx, path, stamped(ledger.Options{}))
	if err != nil {
		return nil, ledgerError(err)
	}
	return db, nil
}
