package ledger

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// RunFilter selects runs; FindRuns returns those that match every field set. The zero value
// selects every run.
type RunFilter struct {
	Status     RunStatus // RunRunning, say
	FileSHA256 string    // the runs of one file's bytes
	Source     string    // the runs of one source (see Run.Source)
	Since      time.Time // started at or after
	// Listing selects the runs (of files, not reconciliations) whose input lists one of these
	// references as a valid row, in its own lines or as the line a run of its source recorded.
	// A non-nil empty list selects none.
	Listing []string
	// Latest keeps only the latest n runs by start; 0 keeps all.
	Latest int
}

// FindRuns returns the runs f selects, oldest first (by start, then by when they were added).
// Each field set reads through an index, so the cost follows what is asked, not the ledger's
// size.
func (db *DB) FindRuns(ctx context.Context, f RunFilter) ([]Run, error) {
	if f.Listing != nil && len(f.Listing) == 0 {
		return nil, nil // listing none of no references
	}
	where, args := db.eng.findRunsWhere(f)
	runs, err := db.queryRuns(ctx, where, args...)
	if err != nil {
		return nil, fmt.Errorf("find runs %s: %w", f.what(), err)
	}
	return runs, nil
}

// what names the filter in errors: the fields set.
func (f RunFilter) what() string {
	var parts []string
	add := func(name, v string) {
		if v != "" {
			parts = append(parts, name+"="+v)
		}
	}
	add("status", string(f.Status))
	add("file", f.FileSHA256)
	add("source", f.Source)
	add("since", fmtTime(f.Since))
	if len(f.Listing) > 0 {
		parts = append(parts, fmt.Sprintf("listing=%d references", len(f.Listing)))
	}
	if f.Latest > 0 {
		parts = append(parts, fmt.Sprintf("latest=%d", f.Latest))
	}
	if len(parts) == 0 {
		return "(all)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// findRunsWhere is FindRuns' WHERE clause, in numbered parameters.
func (e *engine) findRunsWhere(f RunFilter) (string, []any) {
	var where []string
	var args []any
	param := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if f.Status != "" {
		where = append(where, `status = `+param(f.Status))
	}
	if f.FileSHA256 != "" {
		where = append(where, `file_sha256 = `+param(f.FileSHA256))
	}
	if f.Source != "" {
		// The index of sources holds only runs that have one.
		where = append(where, `source = `+param(f.Source)+` AND source <> ''`)
	}
	if !f.Since.IsZero() {
		where = append(where, `started_at >= `+param(fmtTime(f.Since)))
	}
	if len(f.Listing) > 0 {
		list := param(jsonList(f.Listing))
		where = append(where, `kind <> 'reconcile' AND (id IN (SELECT run_id FROM run_rows
		WHERE rejected = 0 AND ref IN `+e.inJSONListAt(list)+`) OR id IN (SELECT o.id FROM payouts p JOIN runs s ON s.id = p.run_id
		JOIN runs o ON o.source = s.source WHERE s.source <> '' AND o.started_at >= s.started_at AND p.ref IN `+e.inJSONListAt(list)+`))`)
	}
	if f.Latest > 0 {
		where = append(where, e.insertionOrder+` IN (SELECT `+e.insertionOrder+` FROM runs ORDER BY started_at DESC, `+
			e.insertionOrder+` DESC LIMIT `+param(f.Latest)+`)`)
	}
	if len(where) == 0 {
		return "", nil
	}
	return `WHERE ` + strings.Join(where, ` AND `), args
}

// runsSQL reads the runs where selects, oldest first.
func (e *engine) runsSQL(where string) string {
	return `SELECT ` + runColumns + ` FROM runs ` + where + ` ORDER BY started_at, ` + e.insertionOrder
}
