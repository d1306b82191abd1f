package approval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/payout/payout/batch/signature"
	"github.com/payout/payout/ledger"
)

// StoredApproval is an approval event with what its stored evidence proves: who signed is
// recomputed from the signature it stores and the plan statement the ledger holds, against the
// allowed signers, never read from the event's text.
type StoredApproval struct {
	Event ledger.LedgerEvent
	// Statement is the plan statement as signed (its valid-until line included); nil when the
	// ledger holds none.
	Statement []byte
	Signature []byte // the armored SSHSIG the event stores
	// Signer is who signed, as the allowed signers say; zero when they were not given (the
	// signature was then checked by the key it carries alone).
	Signer signature.Identity
	// AllowedLines are the allowed_signers lines that name the signature's key.
	AllowedLines []string
	// Problem says why the event proves no approval; "" when it does, or when Purged.
	Problem string
	// Purged says that purge forgot the plan statement: the approval can no longer be checked.
	Purged bool
}

// PlanStatements reads the events that store plan statements (ledger.EventPlan).
type PlanStatements interface {
	LedgerEvents(ctx context.Context, f ledger.EventFilter) ([]ledger.LedgerEvent, error)
}

// StoredStatement is the stored statement of the plan whose digest is planSHA256 (its text
// before the valid-until line), from its EventPlan; ok is false when the ledger holds none whose
// text has that digest. The digest is taken here, not trusted from the event's facts: a
// statement edited in the database has another digest, and is not returned. One that purge
// forgot is returned as ledger.PurgedPayload, with ok false.
func StoredStatement(ctx context.Context, db PlanStatements, planSHA256 string) (statement string, ok bool, err error) {
	if planSHA256 == "" {
		return "", false, nil
	}
	events, err := db.LedgerEvents(ctx, ledger.EventFilter{Kind: ledger.EventPlan, PlanSHA256: planSHA256})
	if err != nil {
		return "", false, fmt.Errorf("plan statement %s: %w", planSHA256, err)
	}
	gone := ""
	for _, e := range events {
		sum := sha256.Sum256([]byte(e.Payload))
		if hex.EncodeToString(sum[:]) == planSHA256 {
			return e.Payload, true, nil
		}
		if e.Payload == ledger.PurgedPayload {
			gone = ledger.PurgedPayload
		}
	}
	return gone, false, nil
}

// CheckStoredApprovals checks each approval event against what it stores: its signature must
// sign the stored plan statement with its valid-until line, with a key the allowed signers (the
// file at allowedSigners) trusted when the event was recorded, and the principal it names must
// be that key's. Without allowedSigners, only that the signature signs the statement by the key
// the event names is checked, and no signer is proved. An event that stores no signature (a
// digest of one is not evidence) proves nothing.
func CheckStoredApprovals(ctx context.Context, db PlanStatements, events []ledger.LedgerEvent, allowedSigners string) ([]StoredApproval, error) {
	var allowed *signature.AllowedSigners
	var loadErr error
	if allowedSigners != "" {
		allowed, loadErr = signature.LoadAllowedSigners(allowedSigners)
	}
	// The statement last read: a run's approvals follow one another and sign one plan, read
	// once; a whole ledger's plans are never held at once.
	var lastDigest, statement string
	var ok bool
	out := make([]StoredApproval, 0, len(events))
	for i, e := range events {
		a := StoredApproval{Event: e, Signature: []byte(e.Facts["signature"])}
		if digest := e.Facts["plan_sha256"]; i == 0 || digest != lastDigest {
			var err error
			if statement, ok, err = StoredStatement(ctx, db, digest); err != nil {
				return nil, err
			}
			lastDigest = digest
		}
		day, dayErr := time.Parse(time.DateOnly, e.Facts["valid_until"])
		if ok && dayErr == nil {
			a.Statement = append([]byte(statement), ValidUntilLine(day)...)
		}
		a.Problem = a.check(allowed, loadErr, statement, ok)
		out = append(out, a)
	}
	return out, nil
}

// check says why a proves no approval; "" when it does.
func (a *StoredApproval) check(allowed *signature.AllowedSigners, loadErr error, statement string, stored bool) string {
	e := a.Event
	switch {
	case len(a.Signature) == 0:
		return "it stores no signature, only what it says of one: it proves no approval"
	case !stored && statement == ledger.PurgedPayload:
		a.Purged = true
		return "" // forgotten by purge, as the names and accounts it listed: proves no signer, and is no finding
	case !stored:
		return "the ledger holds no plan statement of SHA-256 " + e.Facts["plan_sha256"] + " for its signature to sign"
	case loadErr != nil:
		return loadErr.Error()
	case e.Facts["valid_until"] < e.At.UTC().Format(time.DateOnly):
		return "its signature had expired (valid until " + e.Facts["valid_until"] + ") when it was recorded"
	case allowed == nil:
		fp, err := signature.VerifyByItsKey(a.Statement, a.Signature, signature.NamespacePlan)
		switch {
		case err != nil:
			return "its signature does not sign the stored plan statement: " + err.Error()
		case fp != e.Facts["fingerprint"]:
			return fmt.Sprintf("its signature is by key %s, the event names %s", fp, e.Facts["fingerprint"])
		}
		return ""
	}
	if sig, err := signature.Parse(a.Signature); err == nil {
		a.AllowedLines = allowed.LinesOf(sig)
	}
	id, err := VerifyStored([]byte(statement), StoredSignature{Armored: a.Signature, ValidUntil: e.Facts["valid_until"]}, allowed, e.At)
	if err != nil {
		return "its signature does not hold: " + err.Error()
	}
	if id.Principal() != e.Facts["principal"] {
		return fmt.Sprintf("its signature is %s's, the event names %q", id.Principal(), e.Facts["principal"])
	}
	a.Signer = id
	return ""
}
