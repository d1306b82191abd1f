package console

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/atomicfile"
	"github.com/payout/payout/batch/intake"
	"github.com/payout/payout/batch/signature"
	"github.com/payout/payout/batch/watch"
	"github.com/payout/payout/ledger"
)

// Kinds of signature the console makes beside a file awaiting approval.
const (
	signApprove = "approve" // its plan, in payout-plan: FILE.<principal>.sig
	signRefuse  = "refuse"  // a refusal statement, in payout-reject: FILE.<principal>.reject and .reject.sig
	signRepeats = "repeats" // its plan with the rows held as repeats paid, in payout-repeat: FILE.<principal>.repeats.sig
)

// pendingSignature is what the signed-in person was asked to sign, kept with the ceremony. The
// statement itself is not kept: the host that gets the passkey's answer computes it again from
// the file, and signs nothing unless it is what the passkey signed.
type pendingSignature struct {
	Kind       string    `json:"kind"`
	File       string    `json:"file"`
	Reason     string    `json:"reason,omitempty"`
	ValidUntil time.Time `json:"valid_until"`
}

// statement is what p signs, for the file at path: the text, its namespace, where the signature
// goes (and the refusal's statement), and the plan it is about.
type statement struct {
	text                   []byte
	namespace              string
	sigPath, statementPath string
	plan                   intake.Plan
}

// RepeatPlanner is a Planner that also plans a file with its rows held as possible repeats paid
// like any other row: the plan that accepting them signs (`payout plan --allow-repeats`).
type RepeatPlanner interface {
	PlanWithRepeats(ctx context.Context, path string) (intake.Plan, map[int64]string, error)
}

func (s *Server) statementOf(ctx context.Context, p *pendingSignature, path, principal string) (*statement, error) {
	var plan intake.Plan
	var err error
	if p.Kind == signRepeats {
		rp, ok := s.cfg.Planner.(RepeatPlanner)
		if !ok {
			return nil, &pageError{Status: http.StatusNotImplemented, What: "This console cannot plan a file with its repeats.", Do: "Accept them with payout approve --accept-repeats."}
		}
		plan, _, err = rp.PlanWithRepeats(ctx, path)
	} else {
		plan, _, err = s.cfg.Planner.Plan(ctx, path)
	}
	if err != nil {
		return nil, &pageError{Status: http.StatusUnprocessableEntity, What: fmt.Sprintf("The plan of %s cannot be read: %v", p.File, err), Do: "Correct the file and drop it again."}
	}
	base := path + "." + safeName(principal)
	st := &statement{plan: plan}
	switch p.Kind {
	case signRefuse:
		st.namespace, st.statementPath, st.sigPath = signature.NamespaceReject, base+approval.RefusalSuffix, base+approval.RefusalSuffix+approval.SigSuffix
		st.text = plan.RefusalStatement(p.Reason)
		return st, nil
	case signRepeats:
		st.namespace, st.sigPath = signature.NamespaceRepeat, base+".repeats"+approval.SigSuffix
	default:
		st.namespace, st.sigPath = signature.NamespacePlan, base+approval.SigSuffix
	}
	var b bytes.Buffer
	if err := plan.WriteStatement(&b, p.ValidUntil); err != nil {
		return nil, err
	}
	st.text = b.Bytes()
	return st, nil
}

func (s *Server) signBegin(w http.ResponseWriter, r *http.Request, sess *session) error {
	var req struct {
		Folder, File, Decision, Reason string
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		return &pageError{Status: http.StatusBadRequest, What: "The request could not be read.", Do: "Open the review page again."}
	}
	if req.Folder != watch.AwaitingDir {
		return &pageError{Status: http.StatusConflict, What: "Only a file awaiting approval can be approved or refused.", Do: "Open the list of files to see where it is now."}
	}
	path, err := s.locate(req.Folder, req.File)
	if err != nil {
		return err
	}
	p := sess.person
	pending := &pendingSignature{Kind: req.Decision, File: req.File, Reason: strings.TrimSpace(req.Reason), ValidUntil: s.validUntil()}
	switch {
	case req.Decision != signApprove && req.Decision != signRefuse && req.Decision != signRepeats:
		return &pageError{Status: http.StatusBadRequest, What: "Say whether you approve or refuse.", Do: "Use the buttons of the review page."}
	case req.Decision == signApprove && !p.CanApprove:
		return &pageError{Status: http.StatusForbidden, What: fmt.Sprintf("%s may read but not approve plans: the allowed_signers line of this passkey lacks the namespace %s.", p.Principal, signature.NamespacePlan),
			Do: "Ask the administrator if you should approve payouts."}
	case req.Decision == signRefuse && !p.CanRefuse:
		return &pageError{Status: http.StatusForbidden, What: fmt.Sprintf("%s may not refuse plans: the allowed_signers line of this passkey lacks the namespace %s.", p.Principal, signature.NamespaceReject),
			Do: "Ask the administrator if you should refuse payouts."}
	case req.Decision == signRepeats && !p.CanAcceptRepeats:
		return &pageError{Status: http.StatusForbidden, What: fmt.Sprintf("%s may not accept repeats: the allowed_signers line of this passkey lacks the namespace %s.", p.Principal, signature.NamespaceRepeat),
			Do: "Ask the administrator if you should accept repeated payouts."}
	case req.Decision == signRepeats && !watch.HeldForRepeats(path):
		return &pageError{Status: http.StatusConflict, What: "This file holds no rows as possible repeats.", Do: "Approve it, or refuse it."}
	case req.Decision == signRefuse && pending.Reason == "":
		return &pageError{Status: http.StatusBadRequest, What: "A refusal needs a reason, for the file's maker.", Do: "Write what is wrong with the file, then refuse."}
	case req.Decision == signApprove && slices.Contains(s.makers(path), p.Principal):
		return &pageError{Status: http.StatusForbidden, What: "You dropped this file, so your approval would not be a second person's.", Do: "Ask another signer to approve it."}
	case req.Decision == signRepeats && slices.Contains(s.makers(path), p.Principal):
		return &pageError{Status: http.StatusForbidden, What: "You dropped this file, so accepting its repeats is for someone else.", Do: "Ask another signer to accept them."}
	}
	st, err := s.statementOf(r.Context(), pending, path, p.Principal)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(st.sigPath); err == nil && pending.Kind != signRefuse {
		did := map[string]string{signApprove: "approved this file", signRepeats: "accepted this file's repeats"}[pending.Kind]
		return &pageError{Status: http.StatusConflict, What: "You have " + did + " already; one person counts once.", Do: "Wait for the other signers."}
	}
	challenge, err := signature.SignedData(bytes.NewReader(st.text), st.namespace)
	if err != nil {
		return err
	}
	user := passkeyUser{id: sess.userHandle, name: p.Principal, credentials: []webauthn.Credential{{ID: p.credential}}}
	assertion, data, err := s.webauthn.BeginLogin(user, webauthn.WithChallenge(challenge), webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return err
	}
	if err := s.begin(r.Context(), sess, ceremony{For: "sign", Data: *data, Sign: pending}); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, assertion)
	return nil
}

var errStatementChanged = &pageError{Status: http.StatusConflict, What: "The file, or what it pays, changed after you pressed the button, so nothing was signed.",
	Do: "Open the review page again, read it, and sign again."}

func (s *Server) signFinish(w http.ResponseWriter, r *http.Request, sess *session) error {
	c, err := s.take(r.Context(), sess, "sign")
	if err != nil {
		return err
	}
	if c.Sign == nil {
		return errNoCeremony
	}
	data, pending, p := c.Data, c.Sign, sess.person
	parsed, err := protocol.ParseCredentialRequestResponseBody(r.Body)
	if err != nil {
		return passkeyRefused("signature", err)
	}
	a, err := s.loadAllowed()
	if err != nil {
		return err
	}
	line, ok := s.passkeyLine(a, p.credential)
	if !ok {
		return errNotListed
	}
	cred, err := credential(line, p.credential, parsed.Response.AuthenticatorData.Flags.HasBackupEligible())
	if err != nil {
		return err
	}
	if _, err := s.webauthn.ValidateLogin(passkeyUser{id: data.UserID, name: p.Principal, credentials: []webauthn.Credential{cred}}, data, parsed); err != nil {
		return passkeyRefused("signature", err)
	}
	path, err := s.locate(watch.AwaitingDir, pending.File)
	if err != nil {
		return err
	}
	st, err := s.statementOf(r.Context(), pending, path, p.Principal)
	if err != nil {
		return err
	}
	// The passkey signed the challenge begin made: the statement computed here must be the one it
	// was made of, or the signature written would be of a text nobody read.
	challenge, err := signature.SignedData(bytes.NewReader(st.text), st.namespace)
	if err != nil {
		return err
	}
	if base64.RawURLEncoding.EncodeToString(challenge) != data.Challenge {
		return errStatementChanged
	}
	raw := parsed.Raw.AssertionResponse
	armored, err := signature.WebAuthnSignature(line.Key, st.namespace, parsed.Response.CollectedClientData.Origin, signature.Assertion{
		AuthenticatorData: raw.AuthenticatorData, ClientDataJSON: raw.ClientDataJSON, Signature: raw.Signature,
	})
	if err != nil {
		return passkeyRefused("signature", err)
	}
	// The run's own check, before anything is written: a signature nobody could count is no approval.
	id, err := signature.Verify(st.text, armored, st.namespace, a, s.cfg.Now())
	if err != nil {
		return &pageError{Status: http.StatusForbidden, What: "The signature does not count: " + err.Error(), Do: "Ask the administrator to check your allowed_signers line."}
	}
	sigSum := sha256.Sum256(armored)
	kind, detail := ledger.EventConsoleSigned, fmt.Sprintf("%s signed %s of %s in the console", id.Principal(), st.namespace, pending.File)
	if pending.Kind == signRepeats {
		kind, detail = ledger.EventConsoleRepeatsAccepted, fmt.Sprintf("%s accepted the rows of %s held as possible repeats, in the console", id.Principal(), pending.File)
	}
	if err := s.record(r.Context(), kind, detail,
		map[string]string{"principal": id.Principal(), "fingerprint": id.Fingerprint, "namespace": st.namespace, "file": pending.File,
			"file_sha256": st.plan.FileSHA256, "plan_sha256": st.plan.Digest, "sig_file": filepath.Base(st.sigPath), "sig_sha256": hex.EncodeToString(sigSum[:])}); err != nil {
		return err
	}
	if st.statementPath != "" {
		if err := atomicfile.WriteBytes(st.statementPath, sigMode, st.text); err != nil {
			return err
		}
	}
	if err := atomicfile.WriteBytes(st.sigPath, sigMode, armored); err != nil {
		return err
	}
	verb := map[string]string{signApprove: "approved", signRefuse: "refused", signRepeats: "repeats accepted"}[pending.Kind]
	s.cfg.Logger.Info("console: plan "+verb, "principal", id.Principal(), "fingerprint", id.Fingerprint, "signature", filepath.Base(st.sigPath))
	writeJSON(w, http.StatusOK, map[string]string{"redirect": "/files", "message": fmt.Sprintf("%s by %s: wrote %s", verb, id.Principal(), filepath.Base(st.sigPath))})
	return nil
}

// safeName makes a principal fit a file name, as `payout approve` does.
func safeName(p string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 || r == ',' || r == ' ' {
			return '_'
		}
		return r
	}, p)
}
