package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/payout/payout/batch/signature"
	"github.com/payout/payout/batch/untrusted"
)

// DefaultValidity is how long a signature of a plan may hold: a statement's valid-until is at
// most this far from the day a run checks it.
const DefaultValidity = 7 * 24 * time.Hour

// Plan is what signatures are checked against: a file's plan, as its statement and digests.
type Plan struct {
	FileSHA256 string
	Digest     string // the statement's SHA-256 before its valid-until line
	// Statement is the plan statement valid until day, as people sign it.
	Statement func(day time.Time) io.Reader
}

// Approvals (maker-checker). The ledger's policy says how many distinct people must sign a
// file's plan statement before a run pays it; people are the principals of OpenSSH keys listed
// in an allowed_signers file, never operating-system accounts. The signatures are files beside
// the input (`FILE.<anything>.sig`, as `ssh-keygen -Y sign` writes them); each run checks them
// against the plan of the rows it read itself and records each one it accepts in the chain
// before it records or sends anything. The maker counts like anyone else: a policy of N
// approvals is N signatures by N distinct principals, the maker's own included when she signs.

// EnvAllowedSigners names the allowed_signers file that lists who may sign.
const EnvAllowedSigners = "PAYOUT_ALLOWED_SIGNERS"

// SigSuffix ends every signature file's name.
const SigSuffix = ".sig"

// maxSigFile bounds a signature or refusal file read beside an input.
const maxSigFile = 64 << 10

// Policy says who may sign a plan and how long a signature may hold.
type Policy struct {
	// AllowedSigners is the allowed_signers file ($PAYOUT_ALLOWED_SIGNERS).
	AllowedSigners string
	// Validity is the furthest a statement's valid-until may be from the day it is checked
	// (DefaultValidity when 0).
	Validity time.Duration
}

// ValidityText is a validity as people write it: "7 days", "1 day", or, for what is not whole
// days, "36h" and the like.
func ValidityText(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d == day:
		return "1 day"
	case d > 0 && d%day == 0:
		return strconv.FormatInt(int64(d/day), 10) + " days"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// ValidityOrDefault is how long a signature may hold under p.
func (p Policy) ValidityOrDefault() time.Duration {
	if p.Validity <= 0 {
		return DefaultValidity
	}
	return p.Validity
}

// SigFile is a signature or refusal file found beside an input.
type SigFile struct {
	Path   string
	Data   []byte
	SHA256 string
}

// SignatureFiles lists the files beside path named `<its name>.<anything>.sig`, read whole.
// One so named that is not a small regular file (a FIFO, a folder, a device, 64 KiB or more, a
// dangling link, a link another account made) is no signature: ignored names it and says why,
// and the others still count. Anyone who may write beside an input may plant such a file, which
// its owner may be unable to delete, and it must not make valid signatures count for nothing.
func SignatureFiles(path string) (files []SigFile, ignored []string, err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("signatures of %s: %w", path, err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base+".") || !strings.HasSuffix(name, SigSuffix) || len(name) <= len(base)+1+len(SigSuffix) {
			continue
		}
		data, err := readSmall(filepath.Join(dir, name))
		if err != nil {
			ignored = append(ignored, fmt.Sprintf("%s: %v: ignored", name, err))
			continue
		}
		sum := sha256.Sum256(data)
		files = append(files, SigFile{Path: filepath.Join(dir, name), Data: data, SHA256: hex.EncodeToString(sum[:])})
	}
	return files, ignored, nil
}

// readSmall reads a signature-sized regular file, without blocking on a FIFO (a plain open of
// one waits for a writer for ever, holding the ledger's lock) and without following a link
// another account made; its errors say what the file is instead, not where it is.
func readSmall(path string) ([]byte, error) {
	data, err := untrusted.ReadSmallOwned(path, maxSigFile-1)
	var notRegular *untrusted.NotRegularError
	var foreign *untrusted.LinkError
	switch {
	case err == nil:
		return data, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, errors.New("no such file, or a link to nothing")
	case errors.As(err, &notRegular):
		return nil, fmt.Errorf("%s, not a regular file", untrusted.Kind(notRegular.Mode))
	case errors.Is(err, untrusted.ErrTooLarge):
		return nil, fmt.Errorf("%d KiB or more, too large for a signature", maxSigFile>>10)
	case errors.As(err, &foreign) && foreign.Owned == absolute(path):
		return nil, errors.New("a symbolic link another account made: not followed")
	case errors.As(err, &foreign):
		return nil, fmt.Errorf("a link through %s, which another account owns: not followed", foreign.Owned)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return nil, pe.Err
	}
	return nil, err
}

func absolute(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	return abs
}

// Approval is one signature a plan was accepted on.
type Approval struct {
	signature.Identity
	File       string // the signature file's name
	SHA256     string // the signature file's
	ValidUntil time.Time
	// Signature is the signature file's bytes, the armored SSHSIG as signed: the evidence the
	// ledger keeps, which anyone can check again with ssh-keygen -Y verify.
	Signature []byte
}

// Verdict is what the signatures beside a file say of its plan.
type Verdict struct {
	Need     int
	Accepted []Approval
	// Signers are the distinct signers: signatures whose keys or principals overlap count once.
	Signers [][]string
	// NotCounted says why each other signature file does not count.
	NotCounted []string
	// Rejected names a valid refusal of the plan ("bob: wrong month"); it blocks the file.
	Rejected string
	// Ignored names the files named like signatures that are none (see SignatureFiles).
	Ignored []string
	// Refusal is that refusal's statement and signature, as signed.
	Refusal Signed
}

// Signed is a statement and its armored SSHSIG signature, both as signed.
type Signed struct {
	Statement, Signature []byte
}

// Missing says why the verdict does not let the plan be paid; "" when it does.
func (v Verdict) Missing() string {
	var why string
	switch {
	case v.Rejected != "":
		why = "REJECTED by " + v.Rejected
	case len(v.Signers) < v.Need:
		names := make([]string, len(v.Signers))
		for i, s := range v.Signers {
			names[i] = strings.Join(s, "/")
		}
		why = fmt.Sprintf("needs %d distinct signers; have %d", v.Need, len(v.Signers))
		if len(names) > 0 {
			why += ": " + strings.Join(names, ", ")
		}
	default:
		return ""
	}
	if len(v.NotCounted) > 0 {
		why += "; not counted: " + strings.Join(v.NotCounted, "; ")
	}
	if len(v.Ignored) > 0 {
		why += "; " + strings.Join(v.Ignored, "; ")
	}
	return why
}

// ApprovedBy names the distinct signers.
func (v Verdict) ApprovedBy() string {
	names := make([]string, len(v.Signers))
	for i, s := range v.Signers {
		names[i] = strings.Join(s, "/")
	}
	return strings.Join(names, ", ")
}

// Judge checks the signatures beside path against plan under pol, as of now, for a policy of
// need signers.
func Judge(path string, plan Plan, need int, pol Policy, now time.Time) Verdict {
	v := Verdict{Need: need}
	if pol.AllowedSigners == "" {
		v.NotCounted = append(v.NotCounted, "no allowed signers: set $"+EnvAllowedSigners+" to the allowed_signers file that lists who may sign")
		return v
	}
	allowed, err := signature.LoadAllowedSigners(pol.AllowedSigners)
	if err != nil {
		v.NotCounted = append(v.NotCounted, err.Error())
		return v
	}
	files, ignored, err := SignatureFiles(path)
	v.Ignored = ignored
	if err != nil {
		v.NotCounted = append(v.NotCounted, err.Error())
		return v
	}
	for _, f := range files {
		name := filepath.Base(f.Path)
		sig, err := signature.Parse(f.Data)
		if err != nil {
			v.NotCounted = append(v.NotCounted, name+": "+err.Error())
			continue
		}
		switch sig.Namespace() {
		case signature.NamespacePlan:
			a, err := verifyPlanSig(path, allowed, sig, plan, now, pol.ValidityOrDefault())
			if err != nil {
				v.NotCounted = append(v.NotCounted, name+": "+err.Error())
				continue
			}
			a.File, a.SHA256, a.Signature = name, f.SHA256, f.Data
			v.Accepted = append(v.Accepted, a)
		case signature.NamespaceRepeat:
			continue // an acceptance of repeats, judged by JudgeRepeats
		case signature.NamespaceReject:
			who, statement, err := checkRefusal(allowed, sig, f.Path, plan, now)
			if err != nil {
				v.NotCounted = append(v.NotCounted, name+": "+err.Error())
			} else if who != "" {
				v.Rejected, v.Refusal = who, Signed{Statement: statement, Signature: f.Data}
			}
		default:
			v.NotCounted = append(v.NotCounted, fmt.Sprintf("%s: made in namespace %q, not %q", name, sig.Namespace(), signature.NamespacePlan))
		}
	}
	v.Signers = DistinctSigners(v.Accepted)
	return v
}

// verifyPlanSig tries the plan's statement with each valid-until a run accepts today (from today
// plus validity, the default of `payout plan`, down to today), then those as many days before, to
// tell an expired signature. A signature that signs none is explained when the file at path was
// only saved again since it was signed (see explainResaved).
func verifyPlanSig(path string, allowed *signature.AllowedSigners, sig signature.Signature, plan Plan, now time.Time, validity time.Duration) (Approval, error) {
	return verifyStatementSig(path, allowed, sig, signature.NamespacePlan, plan, now, validity)
}

// verifyStatementSig is verifyPlanSig for a signature of the plan statement in namespace.
func verifyStatementSig(path string, allowed *signature.AllowedSigners, sig signature.Signature, namespace string, plan Plan, now time.Time, validity time.Duration) (Approval, error) {
	who, err := allowed.Identify(sig, namespace, now)
	if err != nil {
		return Approval{}, err
	}
	days := int(validity / (24 * time.Hour))
	id, day, ok, err := signedDay(allowed, sig, namespace, plan, now, days)
	switch {
	case err != nil:
		return Approval{}, err
	case ok && day.Before(now.UTC().Truncate(24*time.Hour)):
		return Approval{}, fmt.Errorf("%s signed this plan valid until %s: EXPIRED, it must be signed again", id.Principal(), day.Format(time.DateOnly))
	case ok:
		return Approval{Identity: id, ValidUntil: day}, nil
	}
	if why := explainResaved(path, allowed, sig, namespace, plan, now, days); why != "" {
		return Approval{}, fmt.Errorf("%s's signature (%s) does not sign this file's plan: %s", who.Principal(), who.Fingerprint, why)
	}
	return Approval{}, fmt.Errorf("%s's signature (%s) does not sign this file's plan: the file, its sheet or what it pays differs from what was signed, or its valid-until is more than %d days ahead",
		who.Principal(), who.Fingerprint, days)
}

// signedDay is the valid-until day with which sig signs plan's statement, among the days from
// today plus days down to today minus days, and who signed it; false when none. A key the
// allowed signers do not list is an error.
func signedDay(allowed *signature.AllowedSigners, sig signature.Signature, namespace string, plan Plan, now time.Time, days int) (signature.Identity, time.Time, bool, error) {
	today := now.UTC().Truncate(24 * time.Hour)
	for d := days; d >= -days; d-- {
		day := today.AddDate(0, 0, d)
		id, err := allowed.Verify(plan.Statement(day), sig, namespace, now)
		if errors.Is(err, signature.ErrUnknownKey) {
			return signature.Identity{}, time.Time{}, false, err
		}
		if err == nil {
			return id, day, true, nil
		}
	}
	return signature.Identity{}, time.Time{}, false, nil
}

// WithoutMakers is v with the signatures of makers (principals who dropped the file) no longer
// counted: the maker of a file is not one of its checkers. Each one left out is said in
// NotCounted.
func (v Verdict) WithoutMakers(makers []string) Verdict {
	if len(makers) == 0 || len(v.Accepted) == 0 {
		return v
	}
	var kept []Approval
	for _, a := range v.Accepted {
		if slices.ContainsFunc(a.Principals, func(p string) bool { return slices.Contains(makers, p) }) {
			v.NotCounted = append(v.NotCounted, fmt.Sprintf("%s (%s): %s dropped this file, and its maker is not one of its checkers",
				a.File, a.Principal(), a.Principal()))
			continue
		}
		kept = append(kept, a)
	}
	v.Accepted, v.Signers = kept, DistinctSigners(kept)
	return v
}

// DistinctSigners groups the accepted signatures into people: two signatures are one signer
// when they share a key or a principal.
func DistinctSigners(accepted []Approval) [][]string {
	type group struct {
		keys, names map[string]bool
	}
	var groups []*group
	for _, a := range accepted {
		g := &group{keys: map[string]bool{a.Fingerprint: true}, names: map[string]bool{}}
		for _, p := range a.Principals {
			g.names[p] = true
		}
		var kept []*group
		for _, o := range groups {
			if overlaps(o.keys, g.keys) || overlaps(o.names, g.names) {
				for k := range o.keys {
					g.keys[k] = true
				}
				for n := range o.names {
					g.names[n] = true
				}
				continue
			}
			kept = append(kept, o)
		}
		groups = append(kept, g)
	}
	out := make([][]string, len(groups))
	for i, g := range groups {
		for n := range g.names {
			out[i] = append(out[i], n)
		}
		slices.Sort(out[i])
	}
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return out
}

func overlaps(a, b map[string]bool) bool {
	for k := range a {
		if b[k] {
			return true
		}
	}
	return false
}
