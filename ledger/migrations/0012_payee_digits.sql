-- The repeat guard compares account numbers without their leading zeros: a spreadsheet that
-- took 0012345678 for a number shows 12345678, and both may reach the same account. This index
-- finds a payee's payouts by the digits that remain, without a scan; it replaces the index on
-- the account as written.
DROP INDEX payouts_by_payee;
CREATE INDEX payouts_by_payee_digits ON payouts(ltrim(account, '0'), provider_id, amount, created_at);
