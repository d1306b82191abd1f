package main_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestMetricsFileParsesAsPrometheus: the file --metrics-file writes is read by Prometheus' own
// parser, each family's samples in one group, and every state is there, 0 when nothing has it.
func TestMetricsFileParsesAsPrometheus(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	if out, errOut, code := u.run("run", "--metrics-file", "payout.prom", samplePath(t)); code != 0 {
		t.Fatalf("run exit %d: %s %s", code, out, errOut)
	}
	data, err := os.ReadFile(filepath.Join(u.dir, "payout.prom"))
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("Prometheus' parser refuses the file: %v\n%s", err, data)
	}
	checkOneGroupPerFamily(t, data)

	wantStates := map[string][]string{
		"payout_run_rows":          {"failed", "not_sent", "pending", "rejected", "succeeded", "unknown"},
		"payout_ledger_payouts":    {"READY", "SUBMITTING", "SUBMITTED", "SUCCEEDED", "FAILED", "UNKNOWN", "REJECTED"},
		"payout_ledger_amount_myr": {"READY", "SUBMITTING", "SUBMITTED", "SUCCEEDED", "FAILED", "UNKNOWN", "REJECTED"},
	}
	for name, states := range wantStates {
		mf, ok := families[name]
		if !ok {
			t.Errorf("no family %s", name)
			continue
		}
		got := map[string]float64{}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "state" {
					got[l.GetValue()] = m.GetGauge().GetValue()
				}
			}
		}
		for _, s := range states {
			if _, ok := got[s]; !ok {
				t.Errorf("%s has no sample for state %q (want 0 when none): %v", name, s, got)
			}
		}
	}
	if v := gaugeValue(families, "payout_run_rows", "pending"); v != 50 {
		t.Errorf("payout_run_rows{state=\"pending\"} = %v, want 50", v)
	}
	if v := gaugeValue(families, "payout_run_rows", "failed"); v != 0 {
		t.Errorf("payout_run_rows{state=\"failed\"} = %v, want 0", v)
	}
	if v := gaugeValue(families, "payout_ledger_amount_myr", "SUBMITTED"); v != 302279.94 {
		t.Errorf("payout_ledger_amount_myr{state=\"SUBMITTED\"} = %v, want 302279.94", v)
	}
	for _, name := range []string{"payout_run_skipped_rows", "payout_run_amount_myr", "payout_run_exit_code",
		"payout_ledger_name_mismatches", "payout_run_duration_seconds", "payout_run_last_timestamp_seconds",
		"payout_run_last_success_timestamp_seconds"} {
		if _, ok := families[name]; !ok {
			t.Errorf("no family %s", name)
		}
	}
}

// checkOneGroupPerFamily fails when a family's samples are split by another family's, which the
// text format forbids.
func checkOneGroupPerFamily(t *testing.T, data []byte) {
	t.Helper()
	seen := map[string]bool{}
	current := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, _ := strings.Cut(line, "{")
		name, _, _ = strings.Cut(name, " ")
		if name == current {
			continue
		}
		if seen[name] {
			t.Errorf("samples of %s come in two groups:\n%s", name, data)
		}
		seen[name], current = true, name
	}
}

func gaugeValue(families map[string]*dto.MetricFamily, name, state string) float64 {
	for _, m := range families[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "state" && l.GetValue() == state {
				return m.GetGauge().GetValue()
			}
		}
	}
	return -1
}
