package signature

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// EnvSigningKey names the service account's key file that signs evidence packs and chain heads.
const EnvSigningKey = "PAYOUT_SIGNING_KEY"

// maxKeyFile bounds a key file read.
const maxKeyFile = 64 << 10

// ErrNoKey is returned (wrapped) when no key to sign with can be had.
var ErrNoKey = errors.New("no key to sign with")

// Key signs: a private key read from a file, or a key the ssh agent holds. Close it when done.
type Key struct {
	ssh.Signer
	conn net.Conn // the agent's connection, when the agent signs
}

// Close lets go of the agent's connection, if any.
func (k *Key) Close() error {
	if k == nil || k.conn == nil {
		return nil
	}
	return k.conn.Close()
}

// Fingerprint is the key's SHA-256 fingerprint.
func (k *Key) Fingerprint() string { return ssh.FingerprintSHA256(k.PublicKey()) }

// Sign signs message in namespace with key and returns the armored signature, exactly as
// `ssh-keygen -Y sign -n NAMESPACE` would write it (SHA-512).
func Sign(ctx context.Context, message io.Reader, namespace string, key ssh.Signer) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sig, err := sshsig.Sign(message, key, sshsig.HashSHA512, namespace)
	if err != nil {
		return nil, fmt.Errorf("sign (%s): %w", ssh.FingerprintSHA256(key.PublicKey()), err)
	}
	return sshsig.Armor(sig), nil
}

// LoadKey reads the key file at path: an unencrypted private key signs by itself; a
// passphrase-protected private key, or a public key file, signs through the ssh agent
// ($SSH_AUTH_SOCK), which must hold it.
func LoadKey(ctx context.Context, path string, getenv func(string) string) (*Key, error) {
	data, err := readKeyFile(path)
	if err != nil {
		return nil, err
	}
	signer, err := ssh.ParsePrivateKey(data)
	if err == nil {
		return &Key{Signer: signer}, nil
	}
	var pub ssh.PublicKey
	var missing *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &missing):
		pub = missing.PublicKey
	default:
		if pub, _, _, _, err = ssh.ParseAuthorizedKey(data); err != nil {
			return nil, fmt.Errorf("key %s: neither a private key nor a public key file", path)
		}
	}
	if pub == nil {
		return nil, fmt.Errorf("%w: key %s is protected by a passphrase: add it to the ssh agent (ssh-add %s), or name its .pub file", ErrNoKey, path, path)
	}
	keys, err := AgentKeys(ctx, getenv)
	if err != nil {
		return nil, fmt.Errorf("key %s is protected by a passphrase or is a public key, so the ssh agent must sign: %w", path, err)
	}
	want := ssh.FingerprintSHA256(pub)
	var found *Key
	for _, k := range keys {
		if k.Fingerprint() == want && found == nil {
			found = k
			continue
		}
		if found == nil || k.conn != found.conn {
			_ = k.Close()
		}
	}
	if found == nil {
		return nil, fmt.Errorf("%w: the ssh agent does not hold key %s (%s): ssh-add it", ErrNoKey, path, want)
	}
	return found, nil
}

func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", path, err)
	}
	if len(data) > maxKeyFile {
		return nil, fmt.Errorf("key %s: larger than %d bytes: not a key file", path, maxKeyFile)
	}
	return data, nil
}

// AgentKeys are the keys the ssh agent at $SSH_AUTH_SOCK holds, sharing one connection: close
// each (closing one closes the connection).
func AgentKeys(ctx context.Context, getenv func(string) string) ([]*Key, error) {
	sock := getenv("SSH_AUTH_SOCK")
	if sock == "" {
		return nil, fmt.Errorf("%w: no ssh agent ($SSH_AUTH_SOCK is not set): name a key file with --key, or start ssh-agent and ssh-add your key", ErrNoKey)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", sock)
	if err != nil {
		return nil, fmt.Errorf("%w: the ssh agent at $SSH_AUTH_SOCK does not answer: %v", ErrNoKey, err)
	}
	signers, err := agent.NewClient(conn).Signers()
	if err != nil || len(signers) == 0 {
		conn.Close()
		if err == nil {
			err = errors.New("it holds no key: ssh-add yours")
		}
		return nil, fmt.Errorf("%w: ssh agent: %v", ErrNoKey, err)
	}
	keys := make([]*Key, len(signers))
	for i, s := range signers {
		keys[i] = &Key{Signer: s, conn: conn}
	}
	return keys, nil
}

// SigningKeyFromEnv loads the key that $PAYOUT_SIGNING_KEY names (see LoadKey); nil without
// error when the variable is not set.
func SigningKeyFromEnv(ctx context.Context, getenv func(string) string) (*Key, error) {
	path := strings.TrimSpace(getenv(EnvSigningKey))
	if path == "" {
		return nil, nil
	}
	k, err := LoadKey(ctx, path, getenv)
	if err != nil {
		return nil, fmt.Errorf("$%s: %w", EnvSigningKey, err)
	}
	return k, nil
}
