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
// refuse, payout-repeat accept a file's held repeats, and a line with none of them only read.
// Removing the line ends their access at once.
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
// # Held repeats
//
// A file whose rows folder mode holds as possible repeats of earlier payouts waits in
// awaiting-approval with a note saying so; its review page then offers to accept them. The
// acceptance is what `payout approve --accept-repeats` writes: the passkey's signature of the
// plan with those rows paid (`payout plan --allow-repeats`), in namespace payout-repeat, as
// FILE.<principal>.repeats.sig, which folder mode counts. It is refused to whoever dropped the
// file (watch.Makers), needs a line with payout-repeat, and is first an event of the chain
// (ledger.EventConsoleRepeatsAccepted) naming who accepted.
//
// # Audit
//
// The auditors' page, open to anyone signed in (readers too) and changing nothing, shows the
// approval policy and its history, the chain's head, the latest runs and reconciliations, and
// checks the chain on request. Each run offers its evidence pack: the zip `payout audit export`
// writes (package audit), made from the ledger at the moment of the download, unsigned, which
// `payout audit verify --pack FILE` checks without the ledger.
//
// # Several hosts
//
// Console hosts on one PostgreSQL ledger share their sessions through it (the table
// console_sessions), so a load balancer needs no sticky sessions: a person signed in on one host
// is signed in on all, each step of a passkey ceremony may reach any host, and signing out on
// one signs out everywhere. Give every host the same --origin and --rp-id (what browsers see)
// and the same folder-mode directory and allowed signers. A signature's statement is computed
// again by the host that receives the passkey's answer, from the file as it is then, and nothing
// is written unless it is the text the passkey signed. Ceremonies of people not yet signed in
// are bounded (10,000 at once, 5 minutes each): past that, sign-in says to try again shortly.
//
// # Safety
//
// Every sign-in and every signature is first an event of the ledger's hash chain
// (ledger.EventConsoleSignIn, ledger.EventConsoleSigned): if the ledger cannot record it, it
// does not happen. Pages are html/template (payee names are text from files anyone can write); the one script
// and the style sheet are served from the binary, under a Content-Security-Policy that allows
// nothing else (no inline script, no other origin, no framing). A session is a random 256-bit
// token in an HttpOnly, SameSite=Strict cookie, Secure (and __Host-) when the origin is https;
// the ledger keeps only its SHA-256, with its expiry (Config.SessionTTL from sign-in), and a
// visitor not signed in has no row until they start a passkey ceremony (then for five minutes,
// the ceremony's life). Signing in replaces the token; signing out deletes the row, on every
// host at once. The CSRF token is derived from the session token, never stored. Every POST
// carries it and must come from the console's own origin. Request bodies are bounded, uploads
// by Config.MaxUpload. Every error is a page that says what is wrong and what to do.
package console
