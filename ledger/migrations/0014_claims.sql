-- claimed_by: the process that last claimed a payout for sending (READY -> SUBMITTING), named
-- as Process.Claimant names it. A SUBMITTING row is recovered (made UNKNOWN, looked up before
-- anything is sent again) only once that process is gone. Rows claimed before this column
-- existed name none: no live process claims them.
ALTER TABLE payouts ADD COLUMN claimed_by TEXT NOT NULL DEFAULT '';
