-- The web console's sessions, shared by every console host on the ledger: a browser signed in on
-- one host is signed in on all, and a passkey ceremony begun on one finishes on another. A row
-- is keyed by the SHA-256 of the cookie's token, never the token; it goes when its person signs
-- out on any host, and is swept once expired. A visitor not signed in has a row only while a
-- passkey ceremony of theirs is open (minutes). No money or display depends on a row: the
-- sign-ins themselves are events of the chain.
CREATE TABLE console_sessions (
	token_sha256        TEXT PRIMARY KEY,
	principal           TEXT NOT NULL DEFAULT '',
	credential          TEXT NOT NULL DEFAULT '',
	user_handle         TEXT NOT NULL DEFAULT '',
	expires_at          TEXT NOT NULL,
	ceremony            TEXT NOT NULL DEFAULT '',
	ceremony_expires_at TEXT NOT NULL DEFAULT ''
);
CREATE INDEX console_sessions_by_expiry ON console_sessions(expires_at);
