package ledger

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// TestHotQueriesUseAnIndex asks SQLite how it would run each query of the run, reconcile and
// status paths, and fails on a plan that reads a whole table: such a query costs more with every
// payout ever made. A dropped or changed index, or a query rewritten so that its index no longer
// fits, shows here.
func TestHotQueriesUseAnIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := Create(ctx, filepath.Join(t.TempDir(), "plan.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	refusedHolding, refusedArgs := sqliteEngine.runsHoldingSQL(Filter{RefusedSince: time.Now()})
	notFinalHolding, notFinalArgs := sqliteEngine.runsHoldingSQL(Filter{States: []State{Submitted, Unknown, Submitting, Ready}})
	latest, latestArgs := sqliteEngine.latestSQL(Filter{States: []State{Submitted, Succeeded}, Latest: 3})
	byInvoice, byInvoiceArgs := sqliteEngine.atOnceSQL(Filter{InvoiceNo: "INV"})
	awaiting, awaitingArgs := sqliteEngine.atOnceSQL(Filter{States: []State{Submitting, Unknown}, Account: "0012345", Amount: decimal.RequireFromString("10")})
	findRuns := func(f RunFilter) string {
		where, _ := sqliteEngine.findRunsWhere(f)
		return sqliteEngine.runsSQL(where)
	}
	// A LIMIT saves reading only when no sort of everything read comes before it. (FindRuns latest
	// sorts only the n runs its subquery picked, in index order.)
	limited := map[string]bool{"WalkPayouts latest": true}
	for _, q := range []struct {
		name  string
		sql   string
		args  []any
		using []string // each must appear in the plan
	}{
		{"RecentPayouts", sqliteEngine.recentPayoutsSQL(), []any{`[["a", "1", "1", "1.00"], ["b", "2", "2", "2.00"]]`, "2026"},
			[]string{"USING INDEX payouts_by_payee_digits (<expr>=? AND provider_id=? AND amount=? AND created_at>?)"}},
		{"RecentPayees", sqliteEngine.recentPayeesSQL(), []any{"2026", 2001}, []string{"USING INDEX payouts_by_created (created_at>?)"}},
		{"RunLines", sqliteEngine.runLinesQuery(payoutColumns, false), []any{"run"}, []string{"SEARCH r USING PRIMARY KEY (run_id=?)", "SEARCH p USING INDEX payouts_by_run (run_id=?)",
			"SEARCH o USING INDEX runs_by_source (source=? AND started_at<?)"}},
		{"ReportLines", sqliteEngine.runLinesQuery(reportPayoutColumns, false), []any{"run"}, []string{"SEARCH r USING PRIMARY KEY (run_id=?)", "SEARCH p USING INDEX payouts_by_run (run_id=?)",
			"SEARCH o USING INDEX runs_by_source (source=? AND started_at<?)"}},
		{"Counts", `SELECT state, count, sen FROM state_totals WHERE count <> 0`, nil, []string{"state_totals"}},
		{"Get", `SELECT ` + payoutColumns + ` FROM payouts WHERE ref = ?`, []any{"r"}, []string{"SEARCH payouts USING PRIMARY KEY (ref=?)"}},
		{"Lookup", sqliteEngine.lookupSQL(), []any{`["a", "b", "c"]`}, []string{"SEARCH p USING PRIMARY KEY (ref=?)"}},
		{"Lookup CheckFields", sqliteEngine.lookupCheckFieldsSQL(), []any{`["a", "b", "c"]`}, []string{"SEARCH p USING PRIMARY KEY (ref=?)"}},
		{"WalkPayouts by invoice", byInvoice, byInvoiceArgs, []string{"USING INDEX payouts_by_invoice (invoice_no=?)"}},
		{"WalkPayouts by account and amount", awaiting, awaitingArgs, []string{"USING INDEX payouts_by_payee_digits (<expr>=?)"}},
		{"runsHolding refused", refusedHolding, refusedArgs, []string{"USING INDEX payouts_refused (updated_at>?)"}},
		{"runsHolding not final", notFinalHolding, notFinalArgs, []string{"USING INDEX payouts_by_state (state=?)"}},
		{"WalkPayouts latest", latest, latestArgs,
			[]string{"USING INDEX runs_by_start", "USING INDEX payouts_by_run (run_id=?)"}},
		{"NameChecks mismatches", nameChecksSQL + `WHERE ` + nameMismatchWhere + ` ORDER BY ref`, nil,
			[]string{"USING INDEX payouts_name_mismatch"}},
		{"Events", `SELECT id FROM events WHERE ref = ? ORDER BY id`, []any{"r"}, []string{"USING COVERING INDEX events_by_ref (ref=?)"}},
		{"RunLines", `SELECT r.line, p.state FROM run_rows r LEFT JOIN payouts p ON p.ref = r.ref AND NOT r.rejected
			WHERE r.run_id = ? ORDER BY r.line`, []any{"run"},
			[]string{"SEARCH r USING PRIMARY KEY (run_id=?)", "SEARCH p USING PRIMARY KEY (ref=?)"}},
		{"RejectedRows", `SELECT r.run_id, r.line, r.ref, r.amount FROM run_rows r
			WHERE r.rejected = 1 AND NOT EXISTS (SELECT 1 FROM payouts p WHERE p.ref = r.ref)
			ORDER BY r.run_id, r.line`, nil, []string{"USING INDEX run_rows_rejected", "SEARCH p USING PRIMARY KEY (ref=?)"}},
		{"GetRun", sqliteEngine.runsSQL(`WHERE id = ?`), []any{"run"}, []string{"USING INDEX sqlite_autoindex_runs_1 (id=?)"}},
		{"FindRuns latest", findRuns(RunFilter{Latest: 10}), []any{10}, []string{"USING COVERING INDEX runs_by_start"}},
		{"FindRuns status", findRuns(RunFilter{Status: "running"}), []any{"running"}, []string{"USING INDEX runs_by_status (status=?)"}},
		{"FindRuns file", findRuns(RunFilter{FileSHA256: "sha"}), []any{"sha"}, []string{"USING INDEX runs_by_file (file_sha256=?)"}},
		{"FindRuns since", findRuns(RunFilter{Since: time.Now()}), []any{"2026"}, []string{"USING INDEX runs_by_start (started_at>?)"}},
		{"FindRuns source", findRuns(RunFilter{Source: "src"}), []any{"src"}, []string{"USING INDEX runs_by_source (source=?)"}},
	} {
		t.Run(q.name, func(t *testing.T) {
			plan := queryPlan(t, db, q.sql, q.args...)
			for _, step := range plan {
				// The list a query is given (a JSON array parameter), or a subquery's rows, is the
				// query's own input.
				constant := strings.HasPrefix(step, "SCAN json_each VIRTUAL TABLE") || strings.HasPrefix(step, "SCAN jsonb_each VIRTUAL TABLE") ||
					strings.HasPrefix(step, "SCAN list VIRTUAL TABLE") || step == "SCAN h"
				if strings.HasPrefix(step, "SCAN ") && !strings.Contains(step, " USING ") && !strings.HasPrefix(step, "SCAN state_totals") && !constant {
					t.Errorf("reads a whole table: %q\nplan: %s", step, strings.Join(plan, " | "))
				}
			}
			joined := strings.Join(plan, " | ")
			if limited[q.name] && strings.Contains(joined, "TEMP B-TREE") {
				t.Errorf("sorts everything it reads before its LIMIT: %s", joined)
			}
			for _, want := range q.using {
				if !strings.Contains(joined, want) {
					t.Errorf("plan %q lacks %q", joined, want)
				}
			}
		})
	}
}

// queryPlan is EXPLAIN QUERY PLAN's steps for query.
func queryPlan(t *testing.T, db *DB, query string, args ...any) []string {
	t.Helper()
	rows, err := db.sql.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}
