package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/atomicfile"
	"github.com/payout/payout/ledger"
)

// metricsWriter writes a Prometheus text file for node_exporter's textfile collector. The format
// is simple enough to write by hand, which spares the project prometheus/client_golang.
type metricsWriter struct {
	path string
}

// write replaces the file atomically (temp file and rename) so the collector never reads half.
func (m *metricsWriter) write(res batch.Result, db *ledger.DB) error {
	var b strings.Builder
	gauge := func(name, help string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
	}
	gauge("payout_run_rows", "Rows of the last run by state.")
	states := map[string]int{"rejected": res.Rejected, "succeeded": res.Succeeded, "pending": res.Pending,
		"failed": res.Failed, "unknown": res.Unknown, "not_sent": res.NotSent}
	for _, k := range sortedKeys(states) {
		fmt.Fprintf(&b, "payout_run_rows{state=%q} %d\n", k, states[k])
	}
	gauge("payout_run_skipped_rows", "Rows of the last run accepted in an earlier run.")
	fmt.Fprintf(&b, "payout_run_skipped_rows %d\n", res.Skipped)
	gauge("payout_run_amount_myr", "MYR total of the last run's file.")
	fmt.Fprintf(&b, "payout_run_amount_myr %s\n", res.TotalAmount.StringFixed(2))
	gauge("payout_run_exit_code", "Exit code of the last run.")
	fmt.Fprintf(&b, "payout_run_exit_code %d\n", res.ExitCode)
	if db != nil {
		counts, err := db.Counts(context.Background())
		if err == nil {
			gauge("payout_ledger_payouts", "Payouts in the ledger by state.")
			gauge("payout_ledger_amount_myr", "MYR in the ledger by state.")
			keys := make([]string, 0, len(counts))
			for s := range counts {
				keys = append(keys, string(s))
			}
			sort.Strings(keys)
			for _, k := range keys {
				c := counts[ledger.State(k)]
				fmt.Fprintf(&b, "payout_ledger_payouts{state=%q} %d\n", k, c.Count)
				fmt.Fprintf(&b, "payout_ledger_amount_myr{state=%q} %s\n", k, c.Amount.StringFixed(2))
			}
		}
		if mismatches, err := db.NameMismatches(context.Background()); err == nil {
			gauge("payout_ledger_name_mismatches", "Payouts whose bank holds another name for the account than the recipient.")
			fmt.Fprintf(&b, "payout_ledger_name_mismatches %d\n", len(mismatches))
		}
	}
	gauge("payout_run_duration_seconds", "How long the last run took.")
	fmt.Fprintf(&b, "payout_run_duration_seconds %.3f\n", res.EndedAt.Sub(res.StartedAt).Seconds())
	gauge("payout_run_last_timestamp_seconds", "When the last run ended.")
	fmt.Fprintf(&b, "payout_run_last_timestamp_seconds %d\n", res.EndedAt.Unix())
	// The file is replaced each run: a run that needed attention carries the last success over,
	// so an alert on its age keeps working.
	lastSuccess := previousValue(m.path, "payout_run_last_success_timestamp_seconds")
	if res.ExitCode == exitOK {
		lastSuccess = strconv.FormatInt(res.EndedAt.Unix(), 10)
	}
	if lastSuccess != "" {
		gauge("payout_run_last_success_timestamp_seconds", "When the last run that needed nothing ended.")
		fmt.Fprintf(&b, "payout_run_last_success_timestamp_seconds %s\n", lastSuccess)
	}
	return atomicfile.WriteBytes(m.path, 0o644, []byte(b.String()))
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// previousValue reads a sample's value from the metrics file an earlier run wrote, if any.
func previousValue(path, name string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
