package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/payout/payout/batch"
	"github.com/payout/payout/ledger"
)

// metricsWriter writes a Prometheus text file for node_exporter's textfile collector: after each
// file a command pays, and again when the command ends, whatever its outcome (see end), so that
// the file always describes the last command and its exit code.
type metricsWriter struct {
	path    string
	started time.Time // when the command started
	now     func() time.Time
	last    batch.Result // the last file's result, if a file was run
}

func newMetricsWriter(path string, now func() time.Time) *metricsWriter {
	return &metricsWriter{path: path, started: now(), now: now}
}

// lastSuccessName is the one sample carried from the file an earlier run wrote.
const lastSuccessName = "payout_run_last_success_timestamp_seconds"

// runStates are the label values of payout_run_rows, every one written, 0 when no row has it.
var runStates = []string{"failed", "not_sent", "pending", "rejected", "succeeded", "unknown"}

// file writes the metrics of one file's run; db is the ledger, nil when it cannot be read.
func (m *metricsWriter) file(ctx context.Context, res batch.Result, db *ledger.DB) error {
	m.last = res
	started, ended := res.StartedAt, res.EndedAt
	if started.IsZero() {
		started = m.started // a file refused before its run began
	}
	if ended.IsZero() || ended.Before(started) {
		ended = m.now()
	}
	return m.write(ctx, res, res.ExitCode, started, ended, db)
}

// end writes the metrics once more as the command ends with code: the last file's rows (none
// when no file was run, as when the command was refused or the ledger could not be opened), the
// command's own exit code, start and end. The ledger's figures are read from ledgerPath again,
// under a bounded wait; a ledger that cannot be read is left out, and said on stderr.
func (m *metricsWriter) end(log *slog.Logger, ledgerPath string, code int) {
	ctx, cancel := context.WithTimeout(context.Background(), metricsLedgerWait)
	defer cancel()
	var db *ledger.DB
	if err := ledger.Probe(ledgerPath); err == nil {
		if db, err = ledger.Open(ctx, ledgerPath, stamped(ledger.Options{})); err != nil {
			db = nil
			log.Warn("the metrics file leaves out the ledger's figures: the ledger cannot be read", "err", err)
		} else {
			defer db.Close()
		}
	}
	res := m.last
	res.ExitCode = code
	if err := m.write(ctx, res, code, m.started, m.now(), db); err != nil {
		log.Error("write metrics file", "err", err)
	}
}

// metricsLedgerWait bounds how long the last metrics of a command wait to read the ledger.
const metricsLedgerWait = 10 * time.Second

// write gathers the run's and the ledger's figures in a registry of their own and replaces the
// file atomically (prometheus.WriteToTextfile writes a temp file and renames it), so the
// collector never reads half a file.
func (m *metricsWriter) write(ctx context.Context, res batch.Result, code int, started, ended time.Time, db *ledger.DB) error {
	reg := prometheus.NewPedanticRegistry()
	gauge := func(name, help string, v float64) {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
		g.Set(v)
		reg.MustRegister(g)
	}
	rows := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "payout_run_rows", Help: "Rows of the last run by state."}, []string{"state"})
	reg.MustRegister(rows)
	byState := map[string]int{"rejected": res.Rejected, "succeeded": res.Succeeded, "pending": res.Pending,
		"failed": res.Failed, "unknown": res.Unknown, "not_sent": res.NotSent}
	for _, s := range runStates {
		rows.WithLabelValues(s).Set(float64(byState[s]))
	}
	gauge("payout_run_skipped_rows", "Rows of the last run accepted in an earlier run.", float64(res.Skipped))
	// Prometheus samples are floats; the amounts are for graphs and alerts, never for accounting.
	gauge("payout_run_amount_myr", "MYR total of the last run's file.", res.TotalAmount.InexactFloat64())
	gauge("payout_run_exit_code", "Exit code of the last run.", float64(code))
	if db != nil {
		if err := ledgerMetrics(ctx, reg, db); err != nil {
			return err
		}
	}
	gauge("payout_run_duration_seconds", "How long the last run took.", max(ended.Sub(started), 0).Seconds())
	gauge("payout_run_last_timestamp_seconds", "When the last run ended.", unixSeconds(ended))
	// The file is replaced each run: a run that needed attention carries the last success over,
	// so an alert on its age keeps working.
	lastSuccess, ok := previousValue(m.path, lastSuccessName)
	if code == exitOK {
		lastSuccess, ok = unixSeconds(ended), true
	}
	if ok {
		gauge(lastSuccessName, "When the last run that needed nothing ended.", lastSuccess)
	}
	if err := prometheus.WriteToTextfile(m.path, reg); err != nil {
		return fmt.Errorf("metrics file %s: %w", m.path, err)
	}
	return nil
}

// unixSeconds is t as Prometheus timestamps are written, to the millisecond.
func unixSeconds(t time.Time) float64 {
	return float64(t.UnixMilli()) / 1000
}

// ledgerMetrics registers the ledger's payouts and amounts by state, every state present.
func ledgerMetrics(ctx context.Context, reg *prometheus.Registry, db *ledger.DB) error {
	counts, _, err := ledgerCounts(ctx, db)
	if err != nil {
		return err
	}
	mismatches, err := db.NameChecks(ctx, ledger.NameFilter{Mismatches: true})
	if err != nil {
		return err
	}
	payouts := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "payout_ledger_payouts", Help: "Payouts in the ledger by state."}, []string{"state"})
	amounts := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "payout_ledger_amount_myr", Help: "MYR in the ledger by state."}, []string{"state"})
	reg.MustRegister(payouts, amounts)
	for _, s := range statusOrder {
		c := counts[s]
		payouts.WithLabelValues(string(s)).Set(float64(c.Count))
		amounts.WithLabelValues(string(s)).Set(c.Amount.InexactFloat64())
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "payout_ledger_name_mismatches",
		Help: "Payouts whose bank holds another name for the account than the recipient."})
	g.Set(float64(len(mismatches)))
	reg.MustRegister(g)
	return nil
}

// previousValue reads a gauge's value from the metrics file an earlier run wrote, if any.
func previousValue(path, name string) (float64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(f)
	if err != nil {
		return 0, false
	}
	mf, ok := families[name]
	if !ok || len(mf.GetMetric()) != 1 || mf.GetMetric()[0].GetGauge() == nil {
		return 0, false
	}
	return mf.GetMetric()[0].GetGauge().GetValue(), true
}

// metricsAtEnd, with --metrics-file, starts the command's metrics and returns what writes them
// when it ends, with the exit code *err gives it, whatever that is: a command refused, or
// stopped before any file, replaces the previous command's figures all the same. Deferred by the
// command, after its flags are parsed.
func (o *runOptions) metricsAtEnd(e *env, err *error) func() {
	if o.metricsFile == "" {
		return func() {}
	}
	o.metrics = newMetricsWriter(o.metricsFile, time.Now)
	return func() {
		log, logErr := o.logger(e)
		if logErr != nil {
			log = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		}
		code := exitOK
		if *err != nil {
			code = exitCodeOf(*err)
		}
		o.metrics.end(log, ledgerPath(e, o.ledger), code)
	}
}
