-- The hash chain also covers the rows of the tables a payout's events cannot tell: runs, run
-- lines, callbacks, retries, approvals. Each write of such a row appends an entry here, numbered
-- and linked in the one chain with the events (ids are shared: the chain is both tables in id
-- order). An entry's facts hold the row's columns as SQLite's quote() prints them, personal
-- columns as a salted digest; its payload holds that salt, which purge forgets. The latest entry
-- of a row is what `payout audit verify` compares the row with. Entries older than this
-- migration are written by the program right after it runs, in the same transaction.
CREATE TABLE row_events (
	id         INTEGER PRIMARY KEY,
	ref        TEXT NOT NULL, -- "table/key"
	run_id     TEXT NOT NULL,
	at         TEXT NOT NULL,
	from_state TEXT NOT NULL,
	to_state   TEXT NOT NULL,
	detail     TEXT NOT NULL,
	payload    TEXT NOT NULL,
	actor      TEXT NOT NULL,
	version    TEXT NOT NULL,
	facts      TEXT NOT NULL,
	personal   TEXT NOT NULL,
	prev_hash  TEXT NOT NULL,
	hash       TEXT NOT NULL
);
CREATE INDEX row_events_by_ref ON row_events(ref, id);

-- Append-only like events; only the salt in payload may be replaced (by purge).
CREATE TRIGGER row_events_no_update BEFORE UPDATE ON row_events
WHEN NEW.id IS NOT OLD.id OR NEW.ref IS NOT OLD.ref OR NEW.run_id IS NOT OLD.run_id OR NEW.at IS NOT OLD.at
	OR NEW.from_state IS NOT OLD.from_state OR NEW.to_state IS NOT OLD.to_state OR NEW.detail IS NOT OLD.detail
	OR NEW.actor IS NOT OLD.actor OR NEW.version IS NOT OLD.version OR NEW.facts IS NOT OLD.facts
	OR NEW.personal IS NOT OLD.personal OR NEW.prev_hash IS NOT OLD.prev_hash OR NEW.hash IS NOT OLD.hash
BEGIN SELECT RAISE(ABORT, 'row events are append-only'); END;
CREATE TRIGGER row_events_no_delete BEFORE DELETE ON row_events
BEGIN SELECT RAISE(ABORT, 'row events are append-only'); END;

-- A callback delivered again is counted on the row of its first delivery rather than stored
-- again: token_sha256 is the SHA-256 of the body as received ('' for rows older than this).
ALTER TABLE callbacks ADD COLUMN token_sha256 TEXT NOT NULL DEFAULT '';
ALTER TABLE callbacks ADD COLUMN replays INTEGER NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX callbacks_by_token ON callbacks(token_sha256) WHERE token_sha256 <> '';
