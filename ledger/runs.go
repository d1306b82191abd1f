package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

const runColumns = `id, kind, file, file_sha256, started_at, ended_at, status, exit_code, source, rows, columns`

// AddRun records the start of a run.
func (db *DB) AddRun(ctx context.Context, r Run) error {
	columns := ""
	if r.Columns != nil {
		data, err := json.Marshal(r.Columns)
		if err != nil {
			return fmt.Errorf("add run %s: columns: %w", r.ID, err)
		}
		columns = string(data)
	}
	err := db.writeSealed(ctx, "runs", r.ID, "run started", func(tx *sql.Tx) (string, []any, error) {
		_, err := tx.ExecContext(ctx, `INSERT INTO runs (`+runColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			r.ID, r.Kind, r.File, r.FileSHA256, fmtTime(r.StartedAt), fmtTime(r.EndedAt), r.Status, r.ExitCode, r.Source, r.Rows, columns)
		return `WHERE id = $1`, []any{r.ID}, err
	})
	if err != nil {
		return fmt.Errorf("add run %s: %w", r.ID, err)
	}
	return nil
}

// FinishRun records how a run ended. It returns ErrNotFound for an unknown run.
func (db *DB) FinishRun(ctx context.Context, id string, status RunStatus, exitCode int, ended time.Time) error {
	err := db.writeSealed(ctx, "runs", id, "run ended: "+string(status), func(tx *sql.Tx) (string, []any, error) {
		return `WHERE id = $1`, []any{id}, updateOne(ctx, tx, `UPDATE runs SET status = $1, exit_code = $2, ended_at = $3 WHERE id = $4`,
			status, exitCode, fmtTime(ended), id)
	})
	if err != nil {
		return fmt.Errorf("finish run %s: %w", id, err)
	}
	return nil
}

// updateOne runs an UPDATE that must change a row: ErrNotFound when it changes none.
func updateOne(ctx context.Context, tx *sql.Tx, query string, args ...any) error {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return ErrNotFound
	}
	return nil
}

// GetRun returns one run, or ErrNotFound.
func (db *DB) GetRun(ctx context.Context, id string) (Run, error) {
	runs, err := db.queryRuns(ctx, `WHERE id = $1`, id)
	if err != nil {
		return Run{}, fmt.Errorf("get run %s: %w", id, err)
	}
	if len(runs) == 0 {
		return Run{}, fmt.Errorf("get run %s: %w", id, ErrNotFound)
	}
	return runs[0], nil
}

func (db *DB) queryRuns(ctx context.Context, where string, args ...any) ([]Run, error) {
	rows, err := db.sql.QueryContext(ctx, db.eng.runsSQL(where), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var runs []Run
	for rows.Next() {
		var r Run
		var started, ended, columns string
		if err := rows.Scan(&r.ID, &r.Kind, &r.File, &r.FileSHA256, &started, &ended, &r.Status, &r.ExitCode, &r.Source, &r.Rows, &columns); err != nil {
			return nil, err
		}
		// A header that is not a JSON list was written by hand (the run's seal names the edit):
		// it leaves the run without one, and its retry file in the standard columns, rather than
		// stopping every read of the runs.
		if columns != "" && json.Unmarshal([]byte(columns), &r.Columns) != nil {
			r.Columns = nil
		}
		if r.StartedAt, err = parseTime(started); err != nil {
			return nil, err
		}
		if r.EndedAt, err = parseTime(ended); err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, rows.Err()
}
