-- Events about the ledger itself rather than one payout (the approval policy and its changes,
-- the signatures a run was approved by) are in the same hash chain, with an empty ref. The
-- events table is rebuilt without the reference from ref to payouts for them; `payout audit
-- verify` still finds a payout's events without its row.
CREATE TABLE events_new (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	ref        TEXT NOT NULL,
	run_id     TEXT NOT NULL,
	at         TEXT NOT NULL,
	from_state TEXT NOT NULL,
	to_state   TEXT NOT NULL,
	detail     TEXT NOT NULL,
	payload    TEXT NOT NULL,
	actor      TEXT NOT NULL DEFAULT '',
	version    TEXT NOT NULL DEFAULT '',
	facts      TEXT NOT NULL DEFAULT '',
	personal   TEXT NOT NULL DEFAULT '',
	prev_hash  TEXT NOT NULL DEFAULT '',
	hash       TEXT NOT NULL DEFAULT ''
);
INSERT INTO events_new (id, ref, run_id, at, from_state, to_state, detail, payload, actor, version, facts, personal, prev_hash, hash)
	SELECT id, ref, run_id, at, from_state, to_state, detail, payload, actor, version, facts, personal, prev_hash, hash FROM events;
DROP TABLE events;
ALTER TABLE events_new RENAME TO events;
CREATE INDEX events_by_ref ON events(ref, id);
CREATE INDEX events_ledger_wide ON events(to_state, id) WHERE ref = '';

CREATE TRIGGER events_no_update BEFORE UPDATE ON events
WHEN OLD.hash <> '' AND (NEW.id IS NOT OLD.id OR NEW.ref IS NOT OLD.ref OR NEW.run_id IS NOT OLD.run_id
	OR NEW.at IS NOT OLD.at OR NEW.from_state IS NOT OLD.from_state OR NEW.to_state IS NOT OLD.to_state
	OR NEW.detail IS NOT OLD.detail OR NEW.actor IS NOT OLD.actor OR NEW.version IS NOT OLD.version
	OR NEW.facts IS NOT OLD.facts OR NEW.personal IS NOT OLD.personal OR NEW.prev_hash IS NOT OLD.prev_hash
	OR NEW.hash IS NOT OLD.hash)
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;

-- Approvals are signatures beside the input, checked by each run and recorded in the chain: the
-- table of recorded decisions is kept for the ledgers that have rows in it, and takes no more.
CREATE TRIGGER approvals_closed BEFORE INSERT ON approvals
BEGIN SELECT RAISE(ABORT, 'approvals are OpenSSH signatures beside the file now: this table takes no rows'); END;
CREATE TRIGGER approved_runs_closed BEFORE INSERT ON approved_runs
BEGIN SELECT RAISE(ABORT, 'approvals are OpenSSH signatures beside the file now: this table takes no rows'); END;
