-- TRUNCATE empties a table without firing its row triggers: the guards that keep events, row
-- events and approvals append-only would not see it. It is refused as their DELETE is (SQLite
-- has no TRUNCATE). The tables decide which payouts were made: no command truncates them.
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events FOR EACH STATEMENT
	EXECUTE FUNCTION ledger_refuse('events are append-only');
CREATE TRIGGER row_events_no_truncate BEFORE TRUNCATE ON row_events FOR EACH STATEMENT
	EXECUTE FUNCTION ledger_refuse('row events are append-only');
CREATE TRIGGER approvals_no_truncate BEFORE TRUNCATE ON approvals FOR EACH STATEMENT
	EXECUTE FUNCTION ledger_refuse('approvals are append-only');
CREATE TRIGGER payouts_no_truncate BEFORE TRUNCATE ON payouts FOR EACH STATEMENT
	EXECUTE FUNCTION ledger_refuse('payouts are never deleted: purge masks them');
