// Package signaturetest makes real OpenSSH keys and signatures for tests, with ssh-keygen in a
// test's temporary folder.
package signaturetest
