-- Every process that holds the ledger (ledger.Take) registers here for its lifetime: who it is,
-- and what it pays and leads, so that a process kept off a file or an inbox can say by whom.
-- A row says who a process was, never whether it runs: that is its session advisory lock, which
-- the server releases when the session ends. A killed process's row stays until a later hold
-- sweeps it (its lock free); Close deletes its own.
CREATE TABLE IF NOT EXISTS processes (
	id          text        PRIMARY KEY,              -- ledger.Process.ID: random, as in claimed_by
	claimant    text        NOT NULL,                 -- ledger.Process.Claimant()
	host        text        NOT NULL,
	pid         integer     NOT NULL,
	started     timestamptz NOT NULL,
	lock_key    bigint      NOT NULL,                 -- its session advisory lock, held while it runs
	backend_pid integer     NOT NULL,                 -- the hold's session: pg_locks names it
	paying      text[]      NOT NULL DEFAULT '{}',    -- SHA-256 of each input it holds (PayFile)
	leads       text[]      NOT NULL DEFAULT '{}'     -- absolute path of each inbox it leads (LeadInbox)
);
