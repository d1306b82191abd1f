-- What a run's retry file needs: the input's own header (a JSON array of names, in file order),
-- and the references derived to pay again a row the service refused, each with the one it retries.
ALTER TABLE runs ADD COLUMN columns TEXT NOT NULL DEFAULT '';
ALTER TABLE payouts ADD COLUMN retry_of TEXT NOT NULL DEFAULT '';
CREATE TABLE retries (
	new_ref    TEXT PRIMARY KEY,
	old_ref    TEXT NOT NULL UNIQUE,
	run_id     TEXT NOT NULL,
	created_at TEXT NOT NULL
) WITHOUT ROWID;
