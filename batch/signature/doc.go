// Package signature signs and verifies OpenSSH signatures (the SSHSIG format that `ssh-keygen -Y
// sign` writes) and reads the OpenSSH allowed_signers file that says whose keys may sign.
//
// An identity here is a key, never an operating-system account: a signature counts for the
// principals that the allowed_signers file lists for its key (or, with cert-authority, for the
// principals of a certificate that the listed authority signed). The file is a trust root, so it
// is read the way sshd's StrictModes reads authorized_keys: opened once, and the opened file
// (not the path again) must be a regular file owned by root or by the account reading it and
// writable by nobody else.
//
// Signing takes an unencrypted private key file, or a key held by the ssh agent
// ($SSH_AUTH_SOCK): a passphrase-protected key file is used through the agent that holds it.
package signature
