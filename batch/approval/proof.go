package approval

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch/signature"
)

// The proof at the till. Signatures beside a file are checked when a run records it (Judge), but
// the ledger is then all a later send reads, and whoever can write the ledger's database could
// add a row, change one, or append an approval's event. So before a payout moves to SUBMITTING,
// the run proves it from the evidence the ledger stores, none of which a writer of the database
// can make: the plan statements the run was approved on, and their SSHSIG signatures, verified
// again now against the allowed signers (a file the database does not hold) and counted against
// the policy in force; a stored refusal of the plan stops it. The payout's reference, provider,
// account and amount must then be a row of such a plan. A plan's signatures are verified once a
// run (Prove); each send is a map lookup (Proof.Check).

// ErrNotProved is returned (in a *ProofError) for a payout that the stored evidence does not
// prove approved: it is not sent.
var ErrNotProved = errors.New("not proved approved")

// ProofError says why a payout is not sent.
type ProofError struct {
	Ref string
	Why string
}

func (e *ProofError) Error() string {
	return fmt.Sprintf("payout %s was not sent, and nothing after it: %v: %s; run payout audit verify to see what the ledger holds",
		e.Ref, ErrNotProved, e.Why)
}

func (e *ProofError) Unwrap() error { return ErrNotProved }

// Evidence is what a run's sends are proved against, as the ledger stores it.
type Evidence struct {
	// Need is how many distinct signers the policy in force asks: 0 proves every payout.
	Need int
	// Refused, when set, refuses every payout: the policy itself does not hold.
	Refused string
	Plans   []StoredPlan
	// Stray are the payouts whose row disagrees with their own events, by reference, with why:
	// none of them is sent, whatever the policy.
	Stray map[string]string
}

// StoredPlan is a plan the run was approved on, with what the ledger holds of it.
type StoredPlan struct {
	Digest     string // the SHA-256 of Statement, as the approvals name it
	Statement  []byte // its text before the valid-until line; nil when the ledger holds none
	Signatures []StoredSignature
	Refused    string // who refused it, from a stored refusal; "" when none
}

// StoredSignature is one accepted signature of a plan, as stored.
type StoredSignature struct {
	Armored    []byte
	ValidUntil string // YYYY-MM-DD, the statement's last line
}

// Proof is a run's proved plans: the details of each payout they pay.
type Proof struct {
	need int
	// why is the reason nothing is proved; "" when rows is what the plans pay.
	why string
	// rows are the digests of the rows the plans pay (rowDigest), sorted: not the statements'
	// text, so that the proof of a big file stays small, with nothing in it for the collector to
	// scan. refs, the start of the SHA-256 of each reference they pay, sorted, only tell which
	// refusal to give.
	rows  [][sha256.Size]byte
	refs  []uint64
	stray map[string]string
}

// ValidUntilLine is a plan statement's last line for a signature valid through day (UTC).
func ValidUntilLine(day time.Time) string {
	return "valid-until\t" + day.UTC().Format(time.DateOnly) + "\n"
}

// Prove verifies the signatures of the plans in ev as of now against the allowed signers at
// allowedSigners, once, and returns what they prove.
func Prove(ev Evidence, allowedSigners string, now time.Time) *Proof {
	p := &Proof{need: ev.Need, stray: ev.Stray}
	switch {
	case ev.Refused != "":
		p.why = ev.Refused
		return p
	case ev.Need == 0:
		return p
	case allowedSigners == "":
		p.why = "no allowed signers to check the plan's signatures against: set $" + EnvAllowedSigners
		return p
	case len(ev.Plans) == 0:
		p.why = "the ledger holds no signature of a plan for this run (rows added to the ledger by hand, or approval events deleted)"
		return p
	}
	allowed, err := signature.LoadAllowedSigners(allowedSigners)
	if err != nil {
		p.why = err.Error()
		return p
	}
	var whys []string
	for _, plan := range ev.Plans {
		why := p.add(plan, allowed, now)
		if why != "" {
			whys = append(whys, "plan "+short(plan.Digest)+": "+why)
		}
	}
	if len(p.rows) == 0 {
		p.why = strings.Join(whys, "; ")
	}
	slices.SortFunc(p.rows, compareDigests)
	slices.Sort(p.refs)
	return p
}

// add takes the rows of plan into the proof when its stored signatures hold now; else it says
// why not.
func (p *Proof) add(plan StoredPlan, allowed *signature.AllowedSigners, now time.Time) string {
	switch {
	case plan.Refused != "":
		return "REJECTED by " + plan.Refused
	case plan.Statement == nil:
		return "the ledger holds no statement of it"
	}
	sum := sha256.Sum256(plan.Statement)
	if hex.EncodeToString(sum[:]) != plan.Digest {
		return "its stored statement is not the one its approvals name (edited)"
	}
	today := now.UTC().Format(time.DateOnly)
	var accepted []Approval
	var notCounted []string
	for i, s := range plan.Signatures {
		if s.ValidUntil < today {
			notCounted = append(notCounted, fmt.Sprintf("signature %d is valid until %s: EXPIRED", i+1, s.ValidUntil))
			continue
		}
		id, err := VerifyStored(plan.Statement, s, allowed, now)
		if err != nil {
			notCounted = append(notCounted, fmt.Sprintf("signature %d: %v", i+1, err))
			continue
		}
		accepted = append(accepted, Approval{Identity: id})
	}
	v := Verdict{Need: p.need, Accepted: accepted, Signers: DistinctSigners(accepted), NotCounted: notCounted}
	if why := v.Missing(); why != "" {
		return why
	}
	return p.takeRows(plan.Statement)
}

// VerifyStored checks a stored signature of a plan whose statement before its valid-until line
// is statement: it must sign that text and its valid-until line, in namespace payout-plan, with
// a key the allowed signers trust at at. It says whose it is.
func VerifyStored(statement []byte, s StoredSignature, allowed *signature.AllowedSigners, at time.Time) (signature.Identity, error) {
	day, err := time.Parse(time.DateOnly, s.ValidUntil)
	if err != nil {
		return signature.Identity{}, fmt.Errorf("valid until %q, not a day", s.ValidUntil)
	}
	sig, err := signature.Parse(s.Armored)
	if err != nil {
		return signature.Identity{}, err
	}
	// Read in place: a copy of a big plan's statement would be made for each signature.
	signed := io.MultiReader(bytes.NewReader(statement), strings.NewReader(ValidUntilLine(day)))
	return allowed.Verify(signed, sig, signature.NamespacePlan, at)
}

// takeRows reads the rows a plan statement pays into the proof.
func (p *Proof) takeRows(statement []byte) string {
	n := bytes.Count(statement, []byte("\nrow\t"))
	p.rows, p.refs = slices.Grow(p.rows, n), slices.Grow(p.refs, n)
	sc := bufio.NewScanner(bytes.NewReader(statement))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "row\t") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 7 {
			return fmt.Sprintf("a row of its statement has %d fields, not 7", len(f))
		}
		ref, err := strconv.Unquote(f[2])
		if err != nil {
			return fmt.Sprintf("a row of its statement has the reference %s, not quoted", f[2])
		}
		p.rows = append(p.rows, rowDigest(ref, f[3], f[4], f[5]))
		p.refs = append(p.refs, refHint(ref))
	}
	if err := sc.Err(); err != nil {
		return "its statement: " + err.Error()
	}
	return ""
}

// rowDigest is the SHA-256 of a row's reference (quoted), provider, account and amount, as a
// plan statement writes them.
func rowDigest(ref, provider, account, amount string) [sha256.Size]byte {
	return sha256.Sum256([]byte(strconv.Quote(ref) + "\t" + provider + "\t" + account + "\t" + amount))
}

func compareDigests(a, b [sha256.Size]byte) int { return bytes.Compare(a[:], b[:]) }

// refHint is the start of the SHA-256 of ref.
func refHint(ref string) uint64 {
	sum := sha256.Sum256([]byte(ref))
	return binary.BigEndian.Uint64(sum[:])
}

// Check proves one payout before it is sent: its row must agree with its own events, and its
// reference, provider, account and amount must be a row of a plan whose signatures hold (a
// *ProofError otherwise). With a policy of 0 signers the plan is not asked for.
func (p *Proof) Check(ref string, providerID int64, account string, amount decimal.Decimal) error {
	if why := p.stray[ref]; why != "" {
		return &ProofError{Ref: ref, Why: why}
	}
	if p.why != "" {
		return &ProofError{Ref: ref, Why: p.why}
	}
	if p.need == 0 {
		return nil
	}
	row := rowDigest(ref, strconv.FormatInt(providerID, 10), account, amount.StringFixed(2))
	if _, ok := slices.BinarySearchFunc(p.rows, row, compareDigests); ok {
		return nil
	}
	if _, ok := slices.BinarySearch(p.refs, refHint(ref)); !ok {
		return &ProofError{Ref: ref, Why: "no signed plan of this run pays this reference (added to the ledger by hand)"}
	}
	return &ProofError{Ref: ref, Why: "the ledger's provider, account or amount is not what the signed plan pays (changed in the ledger)"}
}

// short is the start of a digest, enough for people to tell plans apart.
func short(digest string) string {
	if len(digest) > 12 {
		return digest[:12]
	}
	return digest
}
