-- Running totals per state, so that the ledger's summary costs the same at any size. Everything
-- here is integer arithmetic on sen: SQLite's SUM of decimal text would go through floating point.

-- An amount is stored as fixed text with exactly two decimals ("1234.50"); a payout of a fraction
-- of a sen cannot be made, so the ledger refuses one rather than total it inexactly.
CREATE TABLE amount_form_check (
	ref TEXT CONSTRAINT "a stored amount has other than two decimals" CHECK (ref IS NULL)
);
INSERT INTO amount_form_check SELECT ref FROM payouts
	WHERE NOT (amount GLOB '[0-9]*.[0-9][0-9]' AND amount NOT GLOB '*[^0-9.]*' AND amount NOT GLOB '*.*.*')
	LIMIT 1;
DROP TABLE amount_form_check;

CREATE TRIGGER payouts_amount_form BEFORE INSERT ON payouts
	WHEN NOT (NEW.amount GLOB '[0-9]*.[0-9][0-9]' AND NEW.amount NOT GLOB '*[^0-9.]*' AND NEW.amount NOT GLOB '*.*.*')
BEGIN SELECT RAISE(ABORT, 'an amount must have exactly two decimals'); END;

-- The amount in sen, computed from the stored text: it takes no space and cannot disagree with it.
ALTER TABLE payouts ADD COLUMN amount_sen INTEGER GENERATED ALWAYS AS (CAST(REPLACE(amount, '.', '') AS INTEGER)) VIRTUAL;

CREATE TABLE state_totals (
	state TEXT PRIMARY KEY,
	count INTEGER NOT NULL,
	sen   INTEGER NOT NULL
) WITHOUT ROWID;

INSERT INTO state_totals (state, count, sen) SELECT state, count(*), SUM(amount_sen) FROM payouts GROUP BY state;

CREATE TRIGGER state_totals_insert AFTER INSERT ON payouts
BEGIN
	INSERT INTO state_totals (state, count, sen) VALUES (NEW.state, 1, NEW.amount_sen)
		ON CONFLICT (state) DO UPDATE SET count = count + 1, sen = sen + excluded.sen;
END;

-- Apply sets state on every change, a change without a move included: the WHEN skips those.
CREATE TRIGGER state_totals_update AFTER UPDATE OF state, amount ON payouts
	WHEN OLD.state IS NOT NEW.state OR OLD.amount IS NOT NEW.amount
BEGIN
	UPDATE state_totals SET count = count - 1, sen = sen - OLD.amount_sen WHERE state = OLD.state;
	INSERT INTO state_totals (state, count, sen) VALUES (NEW.state, 1, NEW.amount_sen)
		ON CONFLICT (state) DO UPDATE SET count = count + 1, sen = sen + excluded.sen;
END;

CREATE TRIGGER state_totals_delete AFTER DELETE ON payouts
BEGIN
	UPDATE state_totals SET count = count - 1, sen = sen - OLD.amount_sen WHERE state = OLD.state;
END;

-- Bounded look-ups of runs: the latest ones, and those still marked running.
CREATE INDEX runs_by_start ON runs(started_at);
CREATE INDEX runs_by_status ON runs(status, started_at);

-- The payouts whose create the service refused (FAILED with no invoice number), by when they
-- last changed: reconcile looks the recent ones up again. Only those rows are in the index.
CREATE INDEX payouts_refused ON payouts(updated_at) WHERE state = 'FAILED' AND invoice_no = '';

-- The input rows that validation rejected, which `payout status` counts: only they are in it.
CREATE INDEX run_rows_rejected ON run_rows(run_id, line) WHERE rejected = 1;
