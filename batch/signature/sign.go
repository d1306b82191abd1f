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
	protected := errors.As(err, &missing)
	if protected {
		pub = missing.PublicKey
	} else if pub, _, _, _, err = ssh.ParseAuthorizedKey(data); err != nil {
		return nil, fmt.Errorf("key %s: neither a private key nor a public key file", path)
	}
	// payout never asks for a passphrase (it runs from cron as often as from a terminal): such a
	// key signs through the agent, once it was given the key there.
	viaAgent := fmt.Sprintf("load it into the ssh agent, which asks for its passphrase once (eval \"$(ssh-agent)\" && ssh-add %s), then run this again in that shell", path)
	if !protected {
		viaAgent = "its private key must be in the ssh agent (ssh-add the private key), and $SSH_AUTH_SOCK must name that agent"
	}
	if pub == nil {
		return nil, fmt.Errorf("%w: key %s is %w, which payout never asks for: %s", ErrNoKey, path, errProtected, viaAgent)
	}
	keys, err := AgentKeys(ctx, getenv)
	if err != nil {
		if protected {
			return nil, fmt.Errorf("%w: key %s is %w, which payout never asks for: %s (%s)", ErrNoKey, path, errProtected, viaAgent, agentState(err))
		}
		return nil, fmt.Errorf("%w: key %s is a public key: %s (%s)", ErrNoKey, path, viaAgent, agentState(err))
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
		return nil, fmt.Errorf("%w: the ssh agent does not hold key %s (%s): ssh-add %s, then run this again", ErrNoKey, path, want, path)
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

// errProtected says that a key file is encrypted with a passphrase.
var errProtected = errors.New("protected by a passphrase")

// errNoAgent says that no ssh agent is named by $SSH_AUTH_SOCK.
var errNoAgent = errors.New("no ssh agent: $SSH_AUTH_SOCK is not set")

// agentState is what AgentKeys' error says of the agent, without its advice for a command that
// was named no key.
func agentState(err error) string {
	if errors.Is(err, errNoAgent) {
		return errNoAgent.Error()
	}
	return strings.TrimPrefix(err.Error(), ErrNoKey.Error()+": ")
}

// AgentKeys are the keys the ssh agent at $SSH_AUTH_SOCK holds, sharing one connection: close
// each (closing one closes the connection).
func AgentKeys(ctx context.Context, getenv func(string) string) ([]*Key, error) {
	sock := getenv("SSH_AUTH_SOCK")
	if sock == "" {
		return nil, fmt.Errorf("%w: %w: name a key file with --key, or start ssh-agent and ssh-add your key", ErrNoKey, errNoAgent)
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
	if errors.Is(err, errProtected) {
		return nil, fmt.Errorf("$%s: %w; a key that signs unattended, from cron, needs no passphrase: give the service account a key of its own without one, readable by it alone (chmod 600)", EnvSigningKey, err)
	}
	if err != nil {
		return nil, fmt.Errorf("$%s: %w", EnvSigningKey, err)
	}
	return k, nil
}
