package signature

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// Namespaces of the signatures this program makes and checks: one per purpose, so that a
// signature made for one is never taken for another.
const (
	NamespacePlan   = "payout-plan"   // a file's plan statement: an approval
	NamespaceReject = "payout-reject" // a refusal of a plan
	NamespacePolicy = "payout-policy" // a change of the ledger's approval policy
	NamespacePack   = "payout-pack"   // an evidence pack, or a run's chain head
	NamespaceRepeat = "payout-repeat" // a file's plan statement: its rows held as repeats are meant
)

// maxSignature bounds a signature file read: an armored SSHSIG is a few hundred bytes.
const maxSignature = 64 << 10

var (
	// ErrUnknownKey: no line of the allowed signers trusts the signature's key for this
	// namespace now.
	ErrUnknownKey = errors.New("its key is not among the allowed signers")
	// ErrBadSignature: the signature does not sign this message in this namespace.
	ErrBadSignature = errors.New("it does not sign this statement")
)

// Identity is who made a signature: the principals that the allowed signers give its key, and
// the key's fingerprint.
type Identity struct {
	Principals  []string
	Fingerprint string // SHA256:... as ssh-keygen -l prints it
}

// Principal names the identity for people: its principals, comma separated.
func (id Identity) Principal() string { return strings.Join(id.Principals, ",") }

// Signature is a parsed SSHSIG signature.
type Signature struct{ sig *sshsig.Signature }

// Namespace is the namespace the signature was made in (not yet checked).
func (s Signature) Namespace() string { return s.sig.Namespace }

// Fingerprint is the SHA-256 fingerprint of the signing key (not yet checked).
func (s Signature) Fingerprint() string { return fingerprint(s.sig.PublicKey) }

// fingerprint is the SHA-256 fingerprint of key, of the key a certificate certifies for a
// certificate (as ssh-keygen and ssh-add print it): a person who signs with her key and with a
// certificate of it signs with one key, and counts once.
func fingerprint(key ssh.PublicKey) string {
	if cert, ok := key.(*ssh.Certificate); ok {
		key = cert.Key
	}
	return ssh.FingerprintSHA256(key)
}

// Parse reads an armored signature ("-----BEGIN SSH SIGNATURE-----"), as ssh-keygen -Y sign
// writes it.
func Parse(armored []byte) (Signature, error) {
	if len(armored) > maxSignature {
		return Signature{}, fmt.Errorf("not an SSH signature: larger than %d bytes", maxSignature)
	}
	sig, err := sshsig.Unarmor(bytes.TrimSpace(armored))
	if err != nil {
		return Signature{}, fmt.Errorf("not an SSH signature: %w", err)
	}
	return Signature{sig: sig}, nil
}

// Verify checks that armored signs message in namespace with a key that a is trusting now, and
// says whose it is.
func Verify(message, armored []byte, namespace string, a *AllowedSigners, now time.Time) (Identity, error) {
	sig, err := Parse(armored)
	if err != nil {
		return Identity{}, err
	}
	return a.Verify(bytes.NewReader(message), sig, namespace, now)
}

// VerifyByItsKey checks that armored signs message in namespace with the key it carries,
// trusted or not, and returns that key's fingerprint: what can be said of a signature without
// the allowed signers.
func VerifyByItsKey(message, armored []byte, namespace string) (string, error) {
	sig, err := Parse(armored)
	if err != nil {
		return "", err
	}
	if sig.sig.Namespace != namespace {
		return "", fmt.Errorf("%w: it was made in namespace %q, not %q", ErrBadSignature, sig.sig.Namespace, namespace)
	}
	if err := verifySSHSIG(bytes.NewReader(message), sig.sig, namespace); err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	return sig.Fingerprint(), nil
}

// Verify checks that sig signs message in namespace with a key that a trusts now: ErrUnknownKey
// or ErrBadSignature otherwise.
func (a *AllowedSigners) Verify(message io.Reader, sig Signature, namespace string, now time.Time) (Identity, error) {
	id, err := a.identify(sig.sig.PublicKey, namespace, now)
	if err != nil {
		return Identity{}, err
	}
	if sig.sig.Namespace != namespace {
		return Identity{}, fmt.Errorf("%w: it was made in namespace %q, not %q", ErrBadSignature, sig.sig.Namespace, namespace)
	}
	if err := verifySSHSIG(message, sig.sig, namespace); err != nil {
		return Identity{}, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	return id, nil
}

// verifySSHSIG checks that sig signs message in namespace with the key it carries, whatever its
// kind: sshsig.Verify for keys x/crypto/ssh verifies, and as OpenSSH does for a passkey's
// WebAuthn signature, which x/crypto/ssh does not know. Every check of a signature goes here.
func verifySSHSIG(message io.Reader, sig *sshsig.Signature, namespace string) error {
	if sig.Signature.Format == SigAlgoWebAuthn {
		if sig.Namespace != namespace {
			return sshsig.ErrNamespaceMismatch
		}
		return verifyWebAuthnMessage(message, sig)
	}
	return sshsig.Verify(message, sig, sig.PublicKey, sig.HashAlgorithm, namespace)
}

// verifyWebAuthnMessage checks a passkey's SSHSIG signature of message: the signed data is made
// as sshsig.Verify makes it, and checked as OpenSSH checks a WebAuthn signature.
func verifyWebAuthnMessage(message io.Reader, sig *sshsig.Signature) error {
	if err := sig.HashAlgorithm.Available(); err != nil {
		return err
	}
	h := sig.HashAlgorithm.Hash()
	if _, err := io.Copy(h, message); err != nil {
		return err
	}
	return verifyWebAuthn(sig.PublicKey, signedData(sig.Namespace, sig.HashAlgorithm.String(), h.Sum(nil)), sig.Signature)
}

// Identify says whose sig is by a alone, before it is checked against any message:
// ErrUnknownKey when a does not trust its key for namespace at now.
func (a *AllowedSigners) Identify(sig Signature, namespace string, now time.Time) (Identity, error) {
	return a.identify(sig.sig.PublicKey, namespace, now)
}

// Trusts says whose key is, by a, in namespace at now: ErrUnknownKey when no line trusts it there.
func (a *AllowedSigners) Trusts(key ssh.PublicKey, namespace string, now time.Time) (Identity, error) {
	return a.identify(key, namespace, now)
}

// identify finds the principals that a trusts key for in namespace at now.
func (a *AllowedSigners) identify(key ssh.PublicKey, namespace string, now time.Time) (Identity, error) {
	id := Identity{Fingerprint: fingerprint(key)}
	cert, isCert := key.(*ssh.Certificate)
	for _, s := range a.Signers {
		if !s.trusted(namespace, now) {
			continue
		}
		switch {
		case !isCert && !s.CertAuthority && bytes.Equal(s.Key.Marshal(), key.Marshal()):
			id.Principals = append(id.Principals, s.Principals...)
		case isCert && s.CertAuthority && bytes.Equal(s.Key.Marshal(), cert.SignatureKey.Marshal()):
			id.Principals = append(id.Principals, certPrincipals(cert, s, now)...)
		}
	}
	if len(id.Principals) == 0 {
		return id, fmt.Errorf("%w (%s, namespace %s): add it to %s, or check its options", ErrUnknownKey, id.Fingerprint, namespace, a.Path)
	}
	slices.Sort(id.Principals)
	id.Principals = slices.Compact(id.Principals)
	return id, nil
}

// LinesOf are the lines of a that name sig's key, or the authority of its certificate, whatever
// their namespaces and times: the lines an auditor needs to check sig again.
func (a *AllowedSigners) LinesOf(sig Signature) []string {
	key := sig.sig.PublicKey
	if cert, ok := key.(*ssh.Certificate); ok {
		key = cert.SignatureKey
	}
	var out []string
	for _, s := range a.Signers {
		if bytes.Equal(s.Key.Marshal(), key.Marshal()) {
			out = append(out, s.Text)
		}
	}
	return out
}

func (s AllowedSigner) trusted(namespace string, now time.Time) bool {
	if len(s.Namespaces) > 0 && !match(namespace, s.Namespaces) {
		return false
	}
	if !s.ValidAfter.IsZero() && now.Before(s.ValidAfter) {
		return false
	}
	return s.ValidBefore.IsZero() || now.Before(s.ValidBefore)
}

// certPrincipals are the principals of a user certificate, valid at now and signed by the
// authority of s, that s's patterns allow.
func certPrincipals(cert *ssh.Certificate, s AllowedSigner, now time.Time) []string {
	checker := ssh.CertChecker{Clock: func() time.Time { return now }}
	var out []string
	for _, p := range cert.ValidPrincipals {
		if cert.CertType == ssh.UserCert && match(p, s.Principals) && checker.CheckCert(p, cert) == nil {
			out = append(out, p)
		}
	}
	return out
}
