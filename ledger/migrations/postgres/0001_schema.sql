-- schema: 14
-- The ledger's tables as SQLite's migrations 0001 to 0014 leave them: the same tables, columns,
-- indexes and triggers, so that the Go code and the chain's hashes are one. Text compares and
-- sorts byte by byte (COLLATE "C"), as SQLite's does; times are fixed-width UTC text; amounts are
-- exact decimal text; flags are integers 0 and 1.

-- A column's value as SQLite's quote() writes it: the form in which a row event holds each
-- column of a row, and so part of the chain's hashes.
CREATE FUNCTION ledger_quote(v text) RETURNS text LANGUAGE sql IMMUTABLE AS
$$ SELECT CASE WHEN v IS NULL THEN 'NULL' ELSE '''' || replace(v, '''', '''''') || '''' END $$;
CREATE FUNCTION ledger_quote(v bigint) RETURNS text LANGUAGE sql IMMUTABLE AS
$$ SELECT COALESCE(CAST(v AS text), 'NULL') $$;

CREATE TABLE runs (
	id          text COLLATE "C" PRIMARY KEY,
	kind        text COLLATE "C" NOT NULL,
	file        text COLLATE "C" NOT NULL DEFAULT '',
	file_sha256 text COLLATE "C" NOT NULL DEFAULT '',
	started_at  text COLLATE "C" NOT NULL,
	ended_at    text COLLATE "C" NOT NULL DEFAULT '',
	status      text COLLATE "C" NOT NULL,
	exit_code   bigint NOT NULL DEFAULT 0,
	"columns"   text COLLATE "C" NOT NULL DEFAULT '',
	source      text COLLATE "C" NOT NULL DEFAULT '',
	"rows"      bigint NOT NULL DEFAULT 0,
	-- The order runs were added in: the tie-break between two that started in the same instant
	-- (SQLite's rowid). Not a column of the row's row events.
	insertion_order bigint GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX runs_by_file ON runs(file_sha256, started_at);
CREATE INDEX runs_by_start ON runs(started_at);
CREATE INDEX runs_by_status ON runs(status, started_at);
CREATE INDEX runs_by_source ON runs(source, started_at) WHERE source <> '';

CREATE TABLE payouts (
	ref                text COLLATE "C" PRIMARY KEY,
	run_id             text COLLATE "C" NOT NULL,
	line               bigint NOT NULL,
	recipient          text COLLATE "C" NOT NULL,
	provider_id        bigint NOT NULL,
	bank               text COLLATE "C" NOT NULL,
	account            text COLLATE "C" NOT NULL,
	amount             text COLLATE "C" NOT NULL,
	description        text COLLATE "C" NOT NULL,
	state              text COLLATE "C" NOT NULL,
	invoice_no         text COLLATE "C" NOT NULL DEFAULT '',
	transaction_status text COLLATE "C" NOT NULL DEFAULT '',
	bank_reference_no  text COLLATE "C" NOT NULL DEFAULT '',
	attempts           bigint NOT NULL DEFAULT 0,
	not_found_count    bigint NOT NULL DEFAULT 0,
	first_not_found_at text COLLATE "C" NOT NULL DEFAULT '',
	last_error         text COLLATE "C" NOT NULL DEFAULT '',
	created_at         text COLLATE "C" NOT NULL,
	updated_at         text COLLATE "C" NOT NULL,
	-- The amount in sen, computed from the stored text: it cannot disagree with it.
	amount_sen         bigint GENERATED ALWAYS AS (CAST(replace(amount, '.', '') AS bigint)) STORED,
	display_name       text COLLATE "C" NOT NULL DEFAULT '',
	name_check         text COLLATE "C" NOT NULL DEFAULT '',
	retry_of           text COLLATE "C" NOT NULL DEFAULT '',
	refusal_confirmed  bigint NOT NULL DEFAULT 0,
	claimed_by         text COLLATE "C" NOT NULL DEFAULT ''
);
CREATE INDEX payouts_by_state ON payouts(state);
CREATE INDEX payouts_by_run ON payouts(run_id, line);
CREATE INDEX payouts_by_invoice ON payouts(invoice_no) WHERE invoice_no <> '';
CREATE INDEX payouts_refused ON payouts(updated_at) WHERE state = 'FAILED' AND invoice_no = '';
CREATE INDEX payouts_name_mismatch ON payouts(ref) WHERE name_check = 'mismatch';
CREATE INDEX payouts_by_created ON payouts(created_at);
CREATE INDEX payouts_by_payee_digits ON payouts(ltrim(account, '0'), provider_id, amount, created_at);

CREATE TABLE run_rows (
	run_id         text COLLATE "C" NOT NULL REFERENCES runs(id),
	line           bigint NOT NULL,
	ref            text COLLATE "C" NOT NULL,
	recipient      text COLLATE "C" NOT NULL,
	provider_id    bigint NOT NULL,
	bank           text COLLATE "C" NOT NULL,
	account        text COLLATE "C" NOT NULL,
	amount         text COLLATE "C" NOT NULL,
	description    text COLLATE "C" NOT NULL,
	rejected       bigint NOT NULL,
	reason         text COLLATE "C" NOT NULL,
	skipped        bigint NOT NULL,
	paid_elsewhere bigint NOT NULL DEFAULT 0,
	PRIMARY KEY (run_id, line)
);
CREATE INDEX run_rows_rejected ON run_rows(run_id, line) WHERE rejected = 1;

-- The audit trail: events about payouts, and about the ledger itself (empty ref), in one hash
-- chain with row_events (ids are shared: the chain is both tables in id order).
CREATE TABLE events (
	id         bigint PRIMARY KEY,
	ref        text COLLATE "C" NOT NULL,
	run_id     text COLLATE "C" NOT NULL,
	at         text COLLATE "C" NOT NULL,
	from_state text COLLATE "C" NOT NULL,
	to_state   text COLLATE "C" NOT NULL,
	detail     text COLLATE "C" NOT NULL,
	payload    text COLLATE "C" NOT NULL,
	actor      text COLLATE "C" NOT NULL DEFAULT '',
	version    text COLLATE "C" NOT NULL DEFAULT '',
	facts      text COLLATE "C" NOT NULL DEFAULT '',
	personal   text COLLATE "C" NOT NULL DEFAULT '',
	prev_hash  text COLLATE "C" NOT NULL DEFAULT '',
	hash       text COLLATE "C" NOT NULL DEFAULT ''
);
CREATE INDEX events_by_ref ON events(ref, id);
CREATE INDEX events_ledger_wide ON events(to_state, id) WHERE ref = '';

CREATE TABLE callbacks (
	id           bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
	received_at  text COLLATE "C" NOT NULL,
	invoice_no   text COLLATE "C" NOT NULL,
	verdict      text COLLATE "C" NOT NULL,
	payload      text COLLATE "C" NOT NULL,
	token_sha256 text COLLATE "C" NOT NULL DEFAULT '',
	replays      bigint NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX callbacks_by_token ON callbacks(token_sha256) WHERE token_sha256 <> '';

CREATE TABLE state_totals (
	state text COLLATE "C" PRIMARY KEY,
	count bigint NOT NULL,
	sen   bigint NOT NULL
);

CREATE TABLE payout_salts (
	ref  text COLLATE "C" PRIMARY KEY REFERENCES payouts(ref),
	salt text COLLATE "C" NOT NULL
);

CREATE TABLE approvals (
	id               bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
	file             text COLLATE "C" NOT NULL,
	file_sha256      text COLLATE "C" NOT NULL,
	plan_digest      text COLLATE "C" NOT NULL,
	row_count        bigint NOT NULL,
	total            text COLLATE "C" NOT NULL,
	new_payouts      bigint NOT NULL,
	new_total        text COLLATE "C" NOT NULL,
	providers        bigint NOT NULL,
	providers_digest text COLLATE "C" NOT NULL,
	decision         text COLLATE "C" NOT NULL CHECK (decision IN ('requested', 'approved', 'rejected')),
	reason           text COLLATE "C" NOT NULL,
	actor            text COLLATE "C" NOT NULL,
	maker            text COLLATE "C" NOT NULL,
	run_id           text COLLATE "C" NOT NULL,
	decided_at       text COLLATE "C" NOT NULL
);
CREATE INDEX approvals_by_file ON approvals(file_sha256, id);

CREATE TABLE approved_runs (
	run_id      text COLLATE "C" PRIMARY KEY,
	approval_id bigint NOT NULL REFERENCES approvals(id)
);

CREATE TABLE retries (
	new_ref    text COLLATE "C" PRIMARY KEY,
	old_ref    text COLLATE "C" NOT NULL UNIQUE,
	run_id     text COLLATE "C" NOT NULL,
	created_at text COLLATE "C" NOT NULL
);

CREATE TABLE row_events (
	id         bigint PRIMARY KEY,
	ref        text COLLATE "C" NOT NULL, -- "table/key"
	run_id     text COLLATE "C" NOT NULL,
	at         text COLLATE "C" NOT NULL,
	from_state text COLLATE "C" NOT NULL,
	to_state   text COLLATE "C" NOT NULL,
	detail     text COLLATE "C" NOT NULL,
	payload    text COLLATE "C" NOT NULL,
	actor      text COLLATE "C" NOT NULL,
	version    text COLLATE "C" NOT NULL,
	facts      text COLLATE "C" NOT NULL,
	personal   text COLLATE "C" NOT NULL,
	prev_hash  text COLLATE "C" NOT NULL,
	hash       text COLLATE "C" NOT NULL
);
CREATE INDEX row_events_by_ref ON row_events(ref, id);

-- Refusals: a trigger function raises its argument.
CREATE FUNCTION ledger_refuse() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN RAISE EXCEPTION '%', TG_ARGV[0]; END $$;

-- An amount is stored as fixed text with exactly two decimals ("1234.50").
CREATE TRIGGER payouts_amount_form BEFORE INSERT ON payouts FOR EACH ROW
	WHEN (NEW.amount !~ '^[0-9]+\.[0-9][0-9]$')
	EXECUTE FUNCTION ledger_refuse('an amount must have exactly two decimals');

-- Running totals per state, so that the ledger's summary costs the same at any size.
CREATE FUNCTION ledger_state_totals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP IN ('UPDATE', 'DELETE') THEN
		UPDATE state_totals SET count = state_totals.count - 1, sen = state_totals.sen - OLD.amount_sen
			WHERE state = OLD.state;
	END IF;
	IF TG_OP IN ('INSERT', 'UPDATE') THEN
		INSERT INTO state_totals AS t (state, count, sen) VALUES (NEW.state, 1, NEW.amount_sen)
			ON CONFLICT (state) DO UPDATE SET count = t.count + 1, sen = t.sen + excluded.sen;
	END IF;
	RETURN NULL;
END $$;
CREATE TRIGGER state_totals_insert AFTER INSERT ON payouts FOR EACH ROW
	EXECUTE FUNCTION ledger_state_totals();
-- Apply sets state on every change, a change without a move included: the WHEN skips those.
CREATE TRIGGER state_totals_update AFTER UPDATE OF state, amount ON payouts FOR EACH ROW
	WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.amount IS DISTINCT FROM NEW.amount)
	EXECUTE FUNCTION ledger_state_totals();
CREATE TRIGGER state_totals_delete AFTER DELETE ON payouts FOR EACH ROW
	EXECUTE FUNCTION ledger_state_totals();

-- Events are append-only. Two updates are let through: sealing an event that has no hash yet,
-- and replacing a payload (purge masks personal data there; the chain covers the payload through
-- its digest, so the hash is untouched).
CREATE TRIGGER events_no_update BEFORE UPDATE ON events FOR EACH ROW
	WHEN (OLD.hash <> '' AND (NEW.id IS DISTINCT FROM OLD.id OR NEW.ref IS DISTINCT FROM OLD.ref
		OR NEW.run_id IS DISTINCT FROM OLD.run_id OR NEW.at IS DISTINCT FROM OLD.at
		OR NEW.from_state IS DISTINCT FROM OLD.from_state OR NEW.to_state IS DISTINCT FROM OLD.to_state
		OR NEW.detail IS DISTINCT FROM OLD.detail OR NEW.actor IS DISTINCT FROM OLD.actor
		OR NEW.version IS DISTINCT FROM OLD.version OR NEW.facts IS DISTINCT FROM OLD.facts
		OR NEW.personal IS DISTINCT FROM OLD.personal OR NEW.prev_hash IS DISTINCT FROM OLD.prev_hash
		OR NEW.hash IS DISTINCT FROM OLD.hash))
	EXECUTE FUNCTION ledger_refuse('events are append-only');
CREATE TRIGGER events_no_delete BEFORE DELETE ON events FOR EACH ROW
	EXECUTE FUNCTION ledger_refuse('events are append-only');

-- Row events likewise; only the salt in payload may be replaced (by purge).
CREATE TRIGGER row_events_no_update BEFORE UPDATE ON row_events FOR EACH ROW
	WHEN (NEW.id IS DISTINCT FROM OLD.id OR NEW.ref IS DISTINCT FROM OLD.ref
		OR NEW.run_id IS DISTINCT FROM OLD.run_id OR NEW.at IS DISTINCT FROM OLD.at
		OR NEW.from_state IS DISTINCT FROM OLD.from_state OR NEW.to_state IS DISTINCT FROM OLD.to_state
		OR NEW.detail IS DISTINCT FROM OLD.detail OR NEW.actor IS DISTINCT FROM OLD.actor
		OR NEW.version IS DISTINCT FROM OLD.version OR NEW.facts IS DISTINCT FROM OLD.facts
		OR NEW.personal IS DISTINCT FROM OLD.personal OR NEW.prev_hash IS DISTINCT FROM OLD.prev_hash
		OR NEW.hash IS DISTINCT FROM OLD.hash)
	EXECUTE FUNCTION ledger_refuse('row events are append-only');
CREATE TRIGGER row_events_no_delete BEFORE DELETE ON row_events FOR EACH ROW
	EXECUTE FUNCTION ledger_refuse('row events are append-only');

-- Approvals are OpenSSH signatures beside the file, recorded in the chain: the legacy tables
-- of recorded decisions take no rows, and change none.
CREATE TRIGGER approvals_no_update BEFORE UPDATE ON approvals FOR EACH ROW
	EXECUTE FUNCTION ledger_refuse('approvals are append-only');
CREATE TRIGGER approvals_no_delete BEFORE DELETE ON approvals FOR EACH ROW
	EXECUTE FUNCTION ledger_refuse('approvals are append-only');
CREATE TRIGGER approvals_closed BEFORE INSERT ON approvals FOR EACH ROW
	EXECUTE FUNCTION ledger_refuse('approvals are OpenSSH signatures beside the file now: this table takes no rows');
CREATE TRIGGER approved_runs_closed BEFORE INSERT ON approved_runs FOR EACH ROW
	EXECUTE FUNCTION ledger_refuse('approvals are OpenSSH signatures beside the file now: this table takes no rows');
