-- Two decisions about money were made by reading text; they become typed columns.
-- refusal_confirmed: a FAILED payout whose refusal a lookup by external_invoice_ref confirmed
-- (the service created nothing), so that it may be paid again under a new reference. Rows
-- confirmed before this column existed said so at the end of their last error.
ALTER TABLE payouts ADD COLUMN refusal_confirmed INTEGER NOT NULL DEFAULT 0;
UPDATE payouts SET refusal_confirmed = 1
	WHERE instr(last_error, 'refusal confirmed: a lookup by external_invoice_ref found no payout') > 0;
-- paid_elsewhere: a line skipped because a run of another file paid its reference. Lines
-- skipped before this column existed said so at the start of their reason.
ALTER TABLE run_rows ADD COLUMN paid_elsewhere INTEGER NOT NULL DEFAULT 0;
UPDATE run_rows SET paid_elsewhere = 1 WHERE skipped AND substr(reason, 1, 16) = 'already paid by ';
