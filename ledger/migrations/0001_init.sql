-- Amounts are exact decimal text; times are fixed-width UTC text (sortable).
CREATE TABLE runs (
	id          TEXT PRIMARY KEY,
	kind        TEXT NOT NULL,
	file        TEXT NOT NULL DEFAULT '',
	file_sha256 TEXT NOT NULL DEFAULT '',
	started_at  TEXT NOT NULL,
	ended_at    TEXT NOT NULL DEFAULT '',
	status      TEXT NOT NULL,
	exit_code   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_by_file ON runs(file_sha256, started_at);

CREATE TABLE payouts (
	ref                TEXT PRIMARY KEY,
	run_id             TEXT NOT NULL,
	line               INTEGER NOT NULL,
	recipient          TEXT NOT NULL,
	provider_id        INTEGER NOT NULL,
	bank               TEXT NOT NULL,
	account            TEXT NOT NULL,
	amount             TEXT NOT NULL,
	description        TEXT NOT NULL,
	state              TEXT NOT NULL,
	invoice_no         TEXT NOT NULL DEFAULT '',
	transaction_status TEXT NOT NULL DEFAULT '',
	bank_reference_no  TEXT NOT NULL DEFAULT '',
	attempts           INTEGER NOT NULL DEFAULT 0,
	not_found_count    INTEGER NOT NULL DEFAULT 0,
	first_not_found_at TEXT NOT NULL DEFAULT '',
	last_error         TEXT NOT NULL DEFAULT '',
	created_at         TEXT NOT NULL,
	updated_at         TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX payouts_by_state ON payouts(state);
CREATE INDEX payouts_by_run ON payouts(run_id, line);
CREATE INDEX payouts_by_invoice ON payouts(invoice_no) WHERE invoice_no <> '';

CREATE TABLE run_rows (
	run_id      TEXT NOT NULL REFERENCES runs(id),
	line        INTEGER NOT NULL,
	ref         TEXT NOT NULL,
	recipient   TEXT NOT NULL,
	provider_id INTEGER NOT NULL,
	bank        TEXT NOT NULL,
	account     TEXT NOT NULL,
	amount      TEXT NOT NULL,
	description TEXT NOT NULL,
	rejected    INTEGER NOT NULL,
	reason      TEXT NOT NULL,
	skipped     INTEGER NOT NULL,
	PRIMARY KEY (run_id, line)
) WITHOUT ROWID;

CREATE TABLE events (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	ref        TEXT NOT NULL REFERENCES payouts(ref),
	run_id     TEXT NOT NULL,
	at         TEXT NOT NULL,
	from_state TEXT NOT NULL,
	to_state   TEXT NOT NULL,
	detail     TEXT NOT NULL,
	payload    TEXT NOT NULL
);
CREATE INDEX events_by_ref ON events(ref, id);

-- The audit trail is append-only.
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;

CREATE TABLE callbacks (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	received_at TEXT NOT NULL,
	invoice_no  TEXT NOT NULL,
	verdict     TEXT NOT NULL,
	payload     TEXT NOT NULL
);
