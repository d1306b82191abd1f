-- schema: 16
-- The web console's sessions (SQLite's 0016), shared by every console host on the ledger: a
-- browser signed in on one host is signed in on all, and a passkey ceremony begun on one
-- finishes on another. A row is keyed by the SHA-256 of the cookie's token, never the token; it
-- goes when its person signs out on any host, and is swept once expired. No money or display
-- depends on a row (the sign-ins are events of the chain): outside the trail, like processes.
CREATE TABLE console_sessions (
	token_sha256        text COLLATE "C" PRIMARY KEY,
	principal           text COLLATE "C" NOT NULL DEFAULT '',
	credential          text COLLATE "C" NOT NULL DEFAULT '',
	user_handle         text COLLATE "C" NOT NULL DEFAULT '',
	expires_at          text COLLATE "C" NOT NULL,
	ceremony            text COLLATE "C" NOT NULL DEFAULT '',
	ceremony_expires_at text COLLATE "C" NOT NULL DEFAULT ''
);
CREATE INDEX console_sessions_by_expiry ON console_sessions(expires_at);
