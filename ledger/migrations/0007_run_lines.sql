-- A run keeps in run_rows only the lines its payouts cannot tell: rejected lines, lines whose
-- payout another input recorded, lines it resumed, lines with a warning. Every other line is the
-- payout an earlier or the same run of the same input recorded at that line: runs of one input
-- share its source (the file's SHA-256, and the sheet of a workbook).
ALTER TABLE runs ADD COLUMN source TEXT NOT NULL DEFAULT '';
-- The input rows a run read before it recorded any (0 when not known).
ALTER TABLE runs ADD COLUMN rows INTEGER NOT NULL DEFAULT 0;
CREATE INDEX runs_by_source ON runs(source, started_at) WHERE source <> '';
