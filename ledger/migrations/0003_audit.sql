-- The hash chain over events. Each event's hash covers its content (with the actor and the
-- program's version that wrote it, the facts it set and a digest of its personal data) and the
-- hash of the event before it. Events older than this migration are sealed into the chain by the
-- program right after it runs, in the same transaction.
ALTER TABLE events ADD COLUMN actor TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN version TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN facts TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN personal TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN prev_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN hash TEXT NOT NULL DEFAULT '';

-- A random salt per payout for the digests of its name, account number and callback payloads:
-- an unsalted digest of a short account number is reversed by trying every number. Purge deletes
-- the salt with the data.
CREATE TABLE payout_salts (
	ref  TEXT PRIMARY KEY REFERENCES payouts(ref),
	salt TEXT NOT NULL
) WITHOUT ROWID;

-- Events stay append-only. Two updates are let through: sealing an event that has no hash yet
-- (the step after this migration), and replacing a payload (purge masks personal data there;
-- the chain covers the payload through its digest, so the hash is untouched).
DROP TRIGGER events_no_update;
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
WHEN OLD.hash <> '' AND (NEW.id IS NOT OLD.id OR NEW.ref IS NOT OLD.ref OR NEW.run_id IS NOT OLD.run_id
	OR NEW.at IS NOT OLD.at OR NEW.from_state IS NOT OLD.from_state OR NEW.to_state IS NOT OLD.to_state
	OR NEW.detail IS NOT OLD.detail OR NEW.actor IS NOT OLD.actor OR NEW.version IS NOT OLD.version
	OR NEW.facts IS NOT OLD.facts OR NEW.personal IS NOT OLD.personal OR NEW.prev_hash IS NOT OLD.prev_hash
	OR NEW.hash IS NOT OLD.hash)
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
