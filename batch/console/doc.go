// Package console serves `payout serve`: the web pages on which people sign in with a passkey,
// drop payout files into folder mode's inbox, follow each file, and approve or refuse a file's
// plan with a passkey, written as an SSHSIG signature that `ssh-keygen -Y verify` accepts.
//
// # Setting up
//
// `payout serve --listen ADDR --cert FILE --key FILE --rp-id NAME DIR` serves TLS itself; behind
// the company's TLS proxy it listens on loopback only, in plain HTTP, with --origin
// https://NAME as browsers see it (cookies are then Secure all the same). The relying-party id
// (--rp-id, by default the origin's host) is bound into every passkey and so into every
// signer's key: changing it means registering again. DIR is folder mode's directory, which
// `payout watch DIR` pays from; the console only drops files into its inbox and writes
// signatures beside the files awaiting approval.
//
// # Identity
//
// Nobody enrols themselves. Registering a passkey only shows the allowed_signers line of its key:
// an sk-ecdsa-sha2-nistp256@openssh.com key whose application is the relying-party id, with the
// credential id in the line's comment (passkey:ID). A person may sign in only once an
// administrator has put that line into PAYOUT_ALLOWED_SIGNERS; what they may do follows the
// line's namespaces, read again on every request: payout-plan lets them approve, payout-reject
// refuse, and a line with neither only read. Removing the line ends their access at once.
//
// # Approvals
//
// The challenge of an approval is the SSHSIG signed data (namespace payout-plan, SHA-512) of
// the file's plan statement, exactly the text `payout plan FILE` prints, valid for the default
// seven days. go-webauthn checks the assertion (origin, relying party, user present and
// verified, signature); the assertion then becomes a webauthn-sk-ecdsa-sha2-nistp256@openssh.com
// signature (package signature), checked again against the allowed signers in its namespace,
// and is written beside the file as FILE.<principal>.sig, where folder mode's next pass counts
// it as it counts any ssh-keygen signature. A refusal is FILE.<principal>.reject with its
// signature in namespace payout-reject. The person who dropped a file through the console is
// refused as its approver.
//
// # Safety
//
// Every sign-in and every signature is first an event of the ledger's hash chain
// (ledger.EventConsoleSignIn, ledger.EventConsoleSigned): if the ledger cannot record it, it
// does not happen. Pages are html/template (payee names are text from files anyone can write); the one script
// and the style sheet are served from the binary, under a Content-Security-Policy that allows
// nothing else (no inline script, no other origin, no framing). Sessions live in memory behind
// a random id in an HttpOnly, SameSite=Strict cookie, Secure when the origin is https; signing
// in replaces the id, signing out forgets it. Two console hosts therefore need a proxy that
// keeps each browser on one host (sessions are not shared through the ledger). Every POST carries the session's CSRF token and
// must come from the console's own origin. Request bodies are bounded, uploads by
// Config.MaxUpload. Every error is a page that says what is wrong and what to do.
package console
