-- The name the bank holds for a payout's account, from its callback, and whether it matches
-- the recipient: '' (not compared), 'match' or 'mismatch'.
ALTER TABLE payouts ADD COLUMN display_name TEXT NOT NULL DEFAULT '';
ALTER TABLE payouts ADD COLUMN name_check TEXT NOT NULL DEFAULT '';
CREATE INDEX payouts_name_mismatch ON payouts(ref) WHERE name_check = 'mismatch';
