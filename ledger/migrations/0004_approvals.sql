-- The second person's word on a file: what a run was refused for (requested), and each
-- decision on it (approved, rejected). A row binds the file's plan: what it would pay, as checked
-- against the provider list and the ledger when the row was written. The latest decision on a
-- file_sha256 is the one that counts.
CREATE TABLE approvals (
	id               INTEGER PRIMARY KEY AUTOINCREMENT,
	file             TEXT NOT NULL,
	file_sha256      TEXT NOT NULL,
	plan_digest      TEXT NOT NULL,
	row_count        INTEGER NOT NULL,
	total            TEXT NOT NULL,
	new_payouts      INTEGER NOT NULL,
	new_total        TEXT NOT NULL,
	providers        INTEGER NOT NULL,
	providers_digest TEXT NOT NULL,
	decision         TEXT NOT NULL CHECK (decision IN ('requested', 'approved', 'rejected')),
	reason           TEXT NOT NULL,
	actor            TEXT NOT NULL,
	maker            TEXT NOT NULL,
	run_id           TEXT NOT NULL,
	decided_at       TEXT NOT NULL
);
CREATE INDEX approvals_by_file ON approvals(file_sha256, id);

-- The approval each paying run went ahead on, for its reports.
CREATE TABLE approved_runs (
	run_id      TEXT PRIMARY KEY,
	approval_id INTEGER NOT NULL REFERENCES approvals(id)
) WITHOUT ROWID;

CREATE TRIGGER approvals_no_update BEFORE UPDATE ON approvals
BEGIN SELECT RAISE(ABORT, 'approvals are append-only'); END;
CREATE TRIGGER approvals_no_delete BEFORE DELETE ON approvals
BEGIN SELECT RAISE(ABORT, 'approvals are append-only'); END;
