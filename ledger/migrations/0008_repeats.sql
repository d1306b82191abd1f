-- A payout to the same account, bank and amount as one recorded in the last days, under another
-- reference, is held as a possible repeat: this index finds such a payout without a scan.
CREATE INDEX payouts_by_payee ON payouts(account, provider_id, amount, created_at);
