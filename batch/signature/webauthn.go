package signature

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// Key and signature formats of a passkey as OpenSSH names them (PROTOCOL.u2f): the key is a
// security key's ECDSA P-256 key whose application is the relying-party id, and an assertion
// made by a browser is a WebAuthn signature of that key.
const (
	KeyAlgoPasskey       = "sk-ecdsa-sha2-nistp256@openssh.com"
	SigAlgoWebAuthn      = "webauthn-sk-ecdsa-sha2-nistp256@openssh.com"
	webauthnTypeGet      = "webauthn.get"
	authDataHeaderLength = 37 // rpIdHash (32), flags (1), signCount (4)
)

// Authenticator data flags (WebAuthn §6.1) that OpenSSH reads.
const (
	flagUserPresent   = 0x01
	flagAttestedData  = 0x40
	flagExtensionData = 0x80
)

// ErrNotPasskey: a key that is not an ECDSA P-256 key cannot be a passkey's SSH key.
var ErrNotPasskey = errors.New("not an ES256 (ECDSA P-256) passkey")

// PasskeyKey is the OpenSSH public key of a passkey: an sk-ecdsa-sha2-nistp256@openssh.com key
// whose application is rpID, the relying party the browser bound the passkey to. OpenSSH checks
// that the assertions of this key were made for rpID, because the authenticator signs its hash.
func PasskeyKey(pub *ecdsa.PublicKey, rpID string) (ssh.PublicKey, error) {
	if pub == nil || pub.Curve != elliptic.P256() {
		return nil, ErrNotPasskey
	}
	if rpID == "" {
		return nil, errors.New("passkey key: the relying-party id is empty: give the console's --rp-id")
	}
	//lint:ignore SA1019 the SSH wire form is the uncompressed point, which these write as it is
	point := elliptic.Marshal(pub.Curve, pub.X, pub.Y)
	wire := ssh.Marshal(struct {
		Type, Curve string
		Point       []byte
		Application string
	}{KeyAlgoPasskey, "nistp256", point, rpID})
	return ssh.ParsePublicKey(wire)
}

// SignedData is what an SSHSIG signature of message in namespace signs (PROTOCOL.sshsig): the
// preamble, the namespace and the SHA-512 of message. A browser signs it as its WebAuthn
// challenge, so that the assertion it returns is an SSHSIG signature of message.
func SignedData(message io.Reader, namespace string) ([]byte, error) {
	h := sshsig.HashSHA512.Hash()
	if _, err := io.Copy(h, message); err != nil {
		return nil, err
	}
	return signedData(namespace, sshsig.HashSHA512.String(), h.Sum(nil)), nil
}

func signedData(namespace, hashAlgorithm string, digest []byte) []byte {
	return append([]byte("SSHSIG"), ssh.Marshal(struct {
		Namespace, Reserved, HashAlgorithm, Hash string
	}{namespace, "", hashAlgorithm, string(digest)})...)
}

// Assertion is what a browser returns for navigator.credentials.get: the authenticator data, the
// client data JSON and the DER-encoded ECDSA signature of both.
type Assertion struct {
	AuthenticatorData []byte
	ClientDataJSON    []byte
	Signature         []byte // ASN.1 DER, as WebAuthn returns ES256 signatures
}

// WebAuthnSignature turns an assertion by key, whose challenge was the SignedData of a message
// in namespace, into the armored SSHSIG signature of that message that `ssh-keygen -Y verify`
// accepts. origin is the origin the browser put into the client data.
func WebAuthnSignature(key ssh.PublicKey, namespace, origin string, a Assertion) ([]byte, error) {
	if key.Type() != KeyAlgoPasskey {
		return nil, fmt.Errorf("webauthn signature: key type %s: %w", key.Type(), ErrNotPasskey)
	}
	if len(a.AuthenticatorData) < authDataHeaderLength {
		return nil, errors.New("webauthn signature: the authenticator data is shorter than 37 bytes")
	}
	var es struct{ R, S *big.Int }
	if rest, err := asn1.Unmarshal(a.Signature, &es); err != nil || len(rest) != 0 {
		return nil, errors.New("webauthn signature: the assertion's signature is not an ASN.1 ECDSA signature")
	}
	flags := a.AuthenticatorData[32]
	counter := binary.BigEndian.Uint32(a.AuthenticatorData[33:37])
	rest := []byte{flags}
	rest = binary.BigEndian.AppendUint32(rest, counter)
	rest = append(rest, ssh.Marshal(struct {
		Origin, ClientData, Extensions string
	}{origin, string(a.ClientDataJSON), string(a.AuthenticatorData[authDataHeaderLength:])})...)
	sig := &sshsig.Signature{
		Version:       1,
		PublicKey:     key,
		Namespace:     namespace,
		HashAlgorithm: sshsig.HashSHA512,
		Signature: &ssh.Signature{
			Format: SigAlgoWebAuthn,
			Blob:   ssh.Marshal(es),
			Rest:   rest,
		},
	}
	return sshsig.Armor(sig), nil
}

// webauthnFields is the part of a webauthn-sk signature after the ECDSA signature.
type webauthnFields struct {
	Flags      byte
	Counter    uint32
	Origin     string
	ClientData []byte
	Extensions []byte
}

// verifyWebAuthn checks a webauthn-sk-ecdsa-sha2-nistp256@openssh.com signature of data by key
// as OpenSSH's ssh-ecdsa-sk.c does, since x/crypto/ssh knows only plain security-key signatures:
// the client data must begin with the type webauthn.get, data as its challenge and the origin the
// signature names; the authenticator must have seen the user present; the ECDSA signature covers
// the application's hash, flags, counter, extensions and the client data's hash.
func verifyWebAuthn(key ssh.PublicKey, data []byte, sig *ssh.Signature) error {
	pub, application, err := ParsePasskeyKey(key)
	if err != nil {
		return err
	}
	var es struct{ R, S *big.Int }
	if err := ssh.Unmarshal(sig.Blob, &es); err != nil {
		return fmt.Errorf("webauthn signature: %w", err)
	}
	var f webauthnFields
	if err := ssh.Unmarshal(sig.Rest, &f); err != nil {
		return fmt.Errorf("webauthn signature: %w", err)
	}
	switch {
	case strings.Contains(f.Origin, `"`):
		return errors.New("webauthn signature: its origin holds a quote")
	case f.Flags&flagAttestedData != 0:
		return errors.New("webauthn signature: its authenticator data claims attested credential data")
	case (f.Flags&flagExtensionData != 0) != (len(f.Extensions) != 0):
		return errors.New("webauthn signature: its extension flag disagrees with its extensions")
	case f.Flags&flagUserPresent == 0:
		return errors.New("webauthn signature: the authenticator did not see the user present")
	}
	want := `{"type":"` + webauthnTypeGet + `","challenge":"` + base64.RawURLEncoding.EncodeToString(data) +
		`","origin":"` + f.Origin + `"`
	if !bytes.HasPrefix(f.ClientData, []byte(want)) {
		return errors.New("webauthn signature: its client data is not a webauthn.get of this statement from its origin")
	}
	appHash := sha256.Sum256([]byte(application))
	clientHash := sha256.Sum256(f.ClientData)
	signed := append(appHash[:], f.Flags)
	signed = binary.BigEndian.AppendUint32(signed, f.Counter)
	signed = append(signed, f.Extensions...)
	signed = append(signed, clientHash[:]...)
	digest := sha256.Sum256(signed)
	if !ecdsa.Verify(pub, digest[:], es.R, es.S) {
		return errors.New("webauthn signature: the ECDSA signature does not verify")
	}
	return nil
}

// ParsePasskeyKey reads the ECDSA P-256 key and the application (the relying-party id) of a
// passkey's sk-ecdsa-sha2-nistp256@openssh.com key: ErrNotPasskey for any other key.
func ParsePasskeyKey(key ssh.PublicKey) (*ecdsa.PublicKey, string, error) {
	var w struct {
		Type, Curve string
		Point       []byte
		Application string
	}
	if err := ssh.Unmarshal(key.Marshal(), &w); err != nil || w.Type != KeyAlgoPasskey || w.Curve != "nistp256" {
		return nil, "", fmt.Errorf("webauthn signature by a %s key: %w", key.Type(), ErrNotPasskey)
	}
	//lint:ignore SA1019 the SSH wire form is the uncompressed point, which these read as it is
	x, y := elliptic.Unmarshal(elliptic.P256(), w.Point)
	if x == nil {
		return nil, "", fmt.Errorf("webauthn signature: %w: its point is not on P-256", ErrNotPasskey)
	}
	//lint:ignore SA1019 the key is made from the point just read and checked on the curve
	return &ecdsa.PublicKey{Curve: elliptic.P256(), X: x, Y: y}, w.Application, nil
}
