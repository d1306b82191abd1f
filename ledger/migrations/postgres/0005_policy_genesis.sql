-- schema: 15
-- The approval policy's genesis (SQLite's 0015): the program appends, in this migration's
-- transaction, the policy event that a ledger made by an earlier version lacks, recording the
-- policy it held (or, on a ledger being made, the policy payout init asks for). Nothing changes
-- in the schema.
SELECT 1;
