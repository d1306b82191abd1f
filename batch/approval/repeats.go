package approval

import (
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/payout/payout/batch/signature"
)

// Accepting repeats. A row that pays the account, bank and amount of a recent payout is held as
// a possible repeat. Where no one can run a command with --allow-repeat (folder mode), signers
// accept a file's held rows by signing its plan statement, the same text an approval signs, in
// the namespace payout-repeat, beside the file like an approval (`FILE.<anything>.sig`). The
// acceptance is counted like an approval: as many distinct signers as the ledger's policy asks of
// a plan, and at least one. It must come from someone other than the file's maker: a signer
// whose principal is the maker's account name, or that name before an "@", is not counted.

// JudgeRepeats checks the acceptances of repeats beside path against plan, as of now, for need
// distinct signers none of whom is maker (an operating-system account name; "" when unknown).
// The signatures of other namespaces are Judge's and are not named.
func JudgeRepeats(path string, plan Plan, need int, maker string, pol Policy, now time.Time) Verdict {
	v := Verdict{Need: max(need, 1)}
	files, ignored, err := SignatureFiles(path)
	if err != nil {
		v.NotCounted = append(v.NotCounted, err.Error())
		return v
	}
	v.Ignored = ignored
	var allowed *signature.AllowedSigners
	for _, f := range files {
		name := filepath.Base(f.Path)
		sig, err := signature.Parse(f.Data)
		if err != nil || sig.Namespace() != signature.NamespaceRepeat {
			continue
		}
		if allowed == nil {
			if pol.AllowedSigners == "" {
				v.NotCounted = append(v.NotCounted, "no allowed signers: set $"+EnvAllowedSigners+" to the allowed_signers file that lists who may sign")
				return v
			}
			if allowed, err = signature.LoadAllowedSigners(pol.AllowedSigners); err != nil {
				v.NotCounted = append(v.NotCounted, err.Error())
				return v
			}
		}
		a, err := verifyStatementSig(path, allowed, sig, signature.NamespaceRepeat, plan, now, pol.ValidityOrDefault())
		if err != nil {
			v.NotCounted = append(v.NotCounted, name+": "+err.Error())
			continue
		}
		if isMaker(a.Principals, maker) {
			v.NotCounted = append(v.NotCounted, name+": signed by "+strings.Join(a.Principals, "/")+
				", who made the file ("+maker+" dropped it): a repeat is accepted by someone else")
			continue
		}
		a.File, a.SHA256, a.Signature = name, f.SHA256, f.Data
		v.Accepted = append(v.Accepted, a)
	}
	v.Signers = DistinctSigners(v.Accepted)
	return v
}

// isMaker reports whether any of principals names the account maker: the name itself, or the
// name before an "@".
func isMaker(principals []string, maker string) bool {
	if maker == "" {
		return false
	}
	return slices.ContainsFunc(principals, func(p string) bool {
		local, _, _ := strings.Cut(p, "@")
		return p == maker || local == maker
	})
}

// HasRepeatAcceptance reports whether any signature file beside path is made in the namespace
// payout-repeat, valid or not: only then is the plan worth computing for JudgeRepeats.
func HasRepeatAcceptance(path string) bool {
	files, _, err := SignatureFiles(path)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(files, func(f SigFile) bool {
		sig, err := signature.Parse(f.Data)
		return err == nil && sig.Namespace() == signature.NamespaceRepeat
	})
}
