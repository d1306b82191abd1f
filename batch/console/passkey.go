package console

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
	"github.com/go-webauthn/webauthn/webauthn"
	"golang.org/x/crypto/ssh"

	"github.com/payout/payout/batch/signature"
	"github.com/payout/payout/ledger"
)

// credentialTag opens the comment of a passkey's allowed_signers line; the credential id follows.
const credentialTag = "passkey:"

// principalName is what a person may call themselves: a principal ssh-keygen reads unquoted.
var principalName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`)

// person is who is signed in, as the allowed_signers line of their passkey says now.
type person struct {
	Principal   string
	Fingerprint string
	CanApprove  bool // the line trusts the key in namespace payout-plan
	CanRefuse   bool // ... and payout-reject
	// CanAcceptRepeats: ... and payout-repeat, in which a file's rows held as possible repeats
	// are accepted.
	CanAcceptRepeats bool
	credential       []byte
}

// passkeyUser is the account go-webauthn asks about: one passkey, or none while registering.
type passkeyUser struct {
	id          []byte
	name        string
	credentials []webauthn.Credential
}

func (u passkeyUser) WebAuthnID() []byte                         { return u.id }
func (u passkeyUser) WebAuthnName() string                       { return u.name }
func (u passkeyUser) WebAuthnDisplayName() string                { return u.name }
func (u passkeyUser) WebAuthnCredentials() []webauthn.Credential { return u.credentials }

// passkeyLine finds the allowed_signers line of the passkey with credential id: a passkey key
// of this relying party whose comment names the id, valid now (valid-after, valid-before).
func (s *Server) passkeyLine(a *signature.AllowedSigners, id []byte) (signature.AllowedSigner, bool) {
	tag := credentialTag + base64.RawURLEncoding.EncodeToString(id)
	now := s.cfg.Now()
	for _, line := range a.Signers {
		if line.CertAuthority || line.Key.Type() != signature.KeyAlgoPasskey || !slices.Contains(strings.Fields(line.Comment), tag) {
			continue
		}
		if !line.ValidAfter.IsZero() && now.Before(line.ValidAfter) || !line.ValidBefore.IsZero() && !now.Before(line.ValidBefore) {
			continue
		}
		if _, rpID, err := signature.ParsePasskeyKey(line.Key); err == nil && rpID == s.cfg.RPID {
			return line, true
		}
	}
	return signature.AllowedSigner{}, false
}

var errNotListed = &pageError{Status: http.StatusForbidden, What: "This passkey is not among the allowed signers.",
	Do: "Register it, and give the line the console shows to the administrator, who adds it to PAYOUT_ALLOWED_SIGNERS; then sign in again."}

// person is who sess signed in as, by the allowed signers as they are now.
func (s *Server) person(ctx context.Context, sess *session) (*person, error) {
	a, err := s.loadAllowed()
	if err != nil {
		return nil, err
	}
	line, ok := s.passkeyLine(a, sess.credential)
	if !ok || !slices.Contains(line.Principals, sess.principal) {
		if err := s.end(ctx, sess); err != nil {
			return nil, err
		}
		return nil, errNotListed
	}
	now := s.cfg.Now()
	p := &person{Principal: sess.principal, Fingerprint: ssh.FingerprintSHA256(line.Key), credential: sess.credential}
	if id, err := a.Trusts(line.Key, signature.NamespacePlan, now); err == nil && slices.Contains(id.Principals, p.Principal) {
		p.CanApprove = true
	}
	if id, err := a.Trusts(line.Key, signature.NamespaceReject, now); err == nil && slices.Contains(id.Principals, p.Principal) {
		p.CanRefuse = true
	}
	if id, err := a.Trusts(line.Key, signature.NamespaceRepeat, now); err == nil && slices.Contains(id.Principals, p.Principal) {
		p.CanAcceptRepeats = true
	}
	return p, nil
}

// credential is the go-webauthn credential of an allowed_signers passkey line.
func credential(line signature.AllowedSigner, id []byte, backupEligible bool) (webauthn.Credential, error) {
	pub, _, err := signature.ParsePasskeyKey(line.Key)
	if err != nil {
		return webauthn.Credential{}, err
	}
	x, y := make([]byte, 32), make([]byte, 32)
	//lint:ignore SA1019 COSE keeps the coordinates apart, as X and Y give them
	pub.X.FillBytes(x)
	//lint:ignore SA1019 as for X
	pub.Y.FillBytes(y)
	cose, err := webauthncbor.Marshal(webauthncose.EC2PublicKeyData{
		PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.EllipticKey), Algorithm: int64(webauthncose.AlgES256)},
		Curve:         int64(webauthncose.P256), XCoord: x, YCoord: y,
	})
	if err != nil {
		return webauthn.Credential{}, err
	}
	// The line keeps no backup state: the authenticator's own claim is taken, as it proves nothing
	// the key's signature does not.
	return webauthn.Credential{ID: id, PublicKey: cose, Flags: webauthn.CredentialFlags{BackupEligible: backupEligible}}, nil
}

func (s *Server) registerPage(w http.ResponseWriter, r *http.Request, sess *session) error {
	return s.render(w, "register.html", sess, map[string]any{"Title": "Register a passkey", "RPID": s.cfg.RPID})
}

func (s *Server) registerBegin(w http.ResponseWriter, r *http.Request, sess *session) error {
	var req struct{ Name string }
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !principalName.MatchString(req.Name) {
		return &pageError{Status: http.StatusBadRequest, What: "The name must be 1 to 64 letters, digits, dots, dashes, underscores or @, starting with a letter or digit.",
			Do: "Type the name the administrator knows you by, such as alice or alice@example.com."}
	}
	user := passkeyUser{id: make([]byte, 32), name: req.Name}
	_, _ = rand.Read(user.id)
	creation, data, err := s.webauthn.BeginRegistration(user,
		webauthn.WithAuthenticatorSelection(protocol.AuthenticatorSelection{
			ResidentKey: protocol.ResidentKeyRequirementRequired, RequireResidentKey: protocol.ResidentKeyRequired(),
			UserVerification: protocol.VerificationRequired,
		}),
		webauthn.WithCredentialParameters([]protocol.CredentialParameter{{Type: protocol.PublicKeyCredentialType, Algorithm: webauthncose.AlgES256}}),
		webauthn.WithConveyancePreference(protocol.PreferNoAttestation))
	if err != nil {
		return err
	}
	if err := s.begin(r.Context(), sess, ceremony{For: "register", Data: *data, Name: req.Name}); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, creation)
	return nil
}

func (s *Server) registerFinish(w http.ResponseWriter, r *http.Request, sess *session) error {
	c, err := s.take(r.Context(), sess, "register")
	if err != nil {
		return err
	}
	data, name := c.Data, c.Name
	cred, err := s.webauthn.FinishRegistration(passkeyUser{id: data.UserID, name: name}, data, r)
	if err != nil {
		return passkeyRefused("registration", err)
	}
	key, err := webauthncose.ParsePublicKey(cred.PublicKey)
	ec, ok := key.(webauthncose.EC2PublicKeyData)
	if err != nil || !ok {
		return &pageError{Status: http.StatusBadRequest, What: "This passkey's key is not an ES256 key, which OpenSSH needs.", Do: "Register a passkey of another authenticator."}
	}
	pub, err := ec.ToECDSA()
	if err != nil {
		return passkeyRefused("registration", err)
	}
	sshKey, err := signature.PasskeyKey(pub, s.cfg.RPID)
	if err != nil {
		return passkeyRefused("registration", err)
	}
	line := name + ` namespaces="` + signature.NamespacePlan + "," + signature.NamespaceReject + `" ` +
		strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshKey))) + " " + credentialTag + base64.RawURLEncoding.EncodeToString(cred.ID)
	s.cfg.Logger.Info("console: passkey registered, waiting for its allowed_signers line", "principal", name, "fingerprint", ssh.FingerprintSHA256(sshKey))
	writeJSON(w, http.StatusOK, map[string]string{"line": line})
	return nil
}

func (s *Server) signInBegin(w http.ResponseWriter, r *http.Request, sess *session) error {
	assertion, data, err := s.webauthn.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return err
	}
	if err := s.begin(r.Context(), sess, ceremony{For: "signin", Data: *data}); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, assertion)
	return nil
}

func (s *Server) signInFinish(w http.ResponseWriter, r *http.Request, sess *session) error {
	c, err := s.take(r.Context(), sess, "signin")
	if err != nil {
		return err
	}
	data := c.Data
	parsed, err := protocol.ParseCredentialRequestResponseBody(r.Body)
	if err != nil {
		return passkeyRefused("sign-in", err)
	}
	a, err := s.loadAllowed()
	if err != nil {
		return err
	}
	line, ok := s.passkeyLine(a, parsed.RawID)
	if !ok {
		return errNotListed
	}
	handler := func(rawID, userHandle []byte) (webauthn.User, error) {
		cred, err := credential(line, rawID, parsed.Response.AuthenticatorData.Flags.HasBackupEligible())
		if err != nil {
			return nil, err
		}
		return passkeyUser{id: userHandle, name: line.Principals[0], credentials: []webauthn.Credential{cred}}, nil
	}
	if _, err := s.webauthn.ValidateDiscoverableLogin(handler, data, parsed); err != nil {
		return passkeyRefused("sign-in", err)
	}
	fingerprint := ssh.FingerprintSHA256(line.Key)
	if err := s.record(r.Context(), ledger.EventConsoleSignIn, line.Principals[0]+" signed in to the console",
		map[string]string{"principal": line.Principals[0], "fingerprint": fingerprint, "origin": s.cfg.Origin}); err != nil {
		return err
	}
	signed, err := s.signIn(r.Context(), sess, line.Principals[0], parsed.RawID, parsed.Response.UserHandle)
	if err != nil {
		return err
	}
	s.setCookie(w, signed)
	s.cfg.Logger.Info("console: signed in", "principal", signed.principal, "fingerprint", fingerprint)
	writeJSON(w, http.StatusOK, map[string]string{"redirect": "/files"})
	return nil
}

func (s *Server) signOut(w http.ResponseWriter, r *http.Request, sess *session) error {
	if err := s.end(r.Context(), sess); err != nil {
		return err
	}
	s.clearCookie(w)
	http.Redirect(w, r, "/", http.StatusSeeOther)
	return nil
}

var errNoCeremony = &pageError{Status: http.StatusBadRequest, What: "No passkey request of this page is open (it was answered already, or it expired after five minutes).",
	Do: "Open the page again and start over."}

// passkeyRefused says that the browser's answer did not pass; go-webauthn's reason is logged.
func passkeyRefused(what string, err error) error {
	detail := err.Error()
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Details != "" {
		detail = pe.Details
	}
	return &pageError{Status: http.StatusBadRequest, What: "The passkey's answer to this " + what + " was refused: " + strings.TrimSpace(detail) + ".",
		Do: "Try again with the passkey registered for this console, at its own address."}
}
