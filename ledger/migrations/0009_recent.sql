-- A pass that sends nothing reads the payees of the payouts recorded within the repeat window in
-- one go when they are few, rather than looking up every row's payee: this index finds them
-- without a scan.
CREATE INDEX payouts_by_created ON payouts(created_at);
