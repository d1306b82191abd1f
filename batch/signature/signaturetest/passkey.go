package signaturetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/payout/payout/batch/signature"
	"golang.org/x/crypto/ssh"
)

// Passkey is a software authenticator holding one ES256 passkey for a relying party, answering
// as a browser at Origin would: a stand-in for a person's passkey where no browser runs.
type Passkey struct {
	RPID, Origin string
	Private      *ecdsa.PrivateKey
	Key          ssh.PublicKey // its sk-ecdsa-sha2-nistp256@openssh.com key
	counter      uint32
}

// NewPasskey makes a passkey for rpID used from origin.
func NewPasskey(tb testing.TB, rpID, origin string) *Passkey {
	tb.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	key, err := signature.PasskeyKey(&priv.PublicKey, rpID)
	if err != nil {
		tb.Fatal(err)
	}
	return &Passkey{RPID: rpID, Origin: origin, Private: priv, Key: key}
}

// AllowedLine is an allowed_signers line giving principals the passkey in namespaces (comma
// separated; empty: every namespace).
func (p *Passkey) AllowedLine(principals, namespaces string) string {
	opts := ""
	if namespaces != "" {
		opts = `namespaces="` + namespaces + `" `
	}
	return principals + " " + opts + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(p.Key)))
}

// Assert answers navigator.credentials.get for challenge as an authenticator that saw the user
// present and verified (flags UP and UV), from origin, with the client data a browser writes.
func (p *Passkey) Assert(tb testing.TB, challenge []byte, origin string, flags byte) signature.Assertion {
	tb.Helper()
	p.counter++
	rpHash := sha256.Sum256([]byte(p.RPID))
	authData := append(rpHash[:], flags)
	authData = binary.BigEndian.AppendUint32(authData, p.counter)
	clientData := []byte(`{"type":"webauthn.get","challenge":"` + base64.RawURLEncoding.EncodeToString(challenge) +
		`","origin":"` + origin + `","crossOrigin":false}`)
	clientHash := sha256.Sum256(clientData)
	digest := sha256.Sum256(append(append([]byte(nil), authData...), clientHash[:]...))
	der, err := ecdsa.SignASN1(rand.Reader, p.Private, digest[:])
	if err != nil {
		tb.Fatal(err)
	}
	return signature.Assertion{AuthenticatorData: authData, ClientDataJSON: clientData, Signature: der}
}

// Sign signs message in namespace as the console does with a browser's assertion, and returns
// the armored SSHSIG signature.
func (p *Passkey) Sign(tb testing.TB, namespace string, message []byte) []byte {
	tb.Helper()
	challenge, err := signature.SignedData(strings.NewReader(string(message)), namespace)
	if err != nil {
		tb.Fatal(err)
	}
	armored, err := signature.WebAuthnSignature(p.Key, namespace, p.Origin, p.Assert(tb, challenge, p.Origin, 0x05))
	if err != nil {
		tb.Fatal(err)
	}
	return armored
}
