package main_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestMetricsFileTellsEveryOutcome: one metrics file, rewritten by every command given
// --metrics-file, whatever it ends with: a paid file (0), a missing one (2), a refused one (3),
// one paid in part (4), an unreachable service (1), a file that lacks its signatures (5), and
// folder mode refusing a file (3). Each time the file names that exit code, a duration and an
// end time within the command's own, and the ledger's REJECTED count that `payout status` shows.
func TestMetricsFileTellsEveryOutcome(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	header := "external_invoice_ref,recipient_reference,bank,third_party_account_no,amount,payment_description\n"
	write := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(u.dir, name)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(u.dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("refused.csv", header+"MET-1,Ali,Maybank,000181590832,100.00,Gaji\nMET-2,Abu,Bank of Atlantis,000181590833,\"1,200.00\",Gaji\n")
	write("partial.csv", header+"MET-3,Ali,Maybank,000181590834,100.00,Gaji\nMET-4,Abu,Maybank,12,\"2,200.00\",Gaji\n")
	write("unreachable.csv", header+"MET-5,Ali,Maybank,000181590836,100.00,Gaji\n")
	write("unsigned.csv", header+"MET-6,Ali,Maybank,000181590837,100.00,Gaji\n")
	write("drop/inbox/empty.csv", header)
	prom := filepath.Join(u.dir, "payout.prom")

	steps := []struct {
		name string
		exit int
		args []string
		env  []string
		// before prepares the ledger for the step.
		before func()
	}{
		{name: "paid", exit: 0, args: []string{"run", samplePath(t)}},
		{name: "missing file", exit: 2, args: []string{"run", "missing.csv"}},
		{name: "refused file", exit: 3, args: []string{"run", "refused.csv"}},
		{name: "paid in part", exit: 4, args: []string{"run", "--allow-partial", "partial.csv"}},
		{name: "service unreachable", exit: 1, args: []string{"run", "unreachable.csv"}, env: []string{"PAYOUT_BASE_URL=http://127.0.0.1:1"}},
		{name: "unsigned", exit: 5, args: []string{"run", "unsigned.csv"}, before: func() {
			newSigners(t, u)
			if out, errOut, code := u.run("policy", "--approvals", "1"); code != 0 {
				t.Fatalf("policy --approvals 1: exit %d: %s %s", code, out, errOut)
			}
		}},
		{name: "folder mode refuses a file", exit: 3, args: []string{"watch", "--once", "--settle", "0s", "drop"}},
	}
	for _, st := range steps {
		t.Run(fmt.Sprintf("exit %d, %s", st.exit, st.name), func(t *testing.T) {
			if st.before != nil {
				st.before()
			}
			step := &user{tb: t, dir: u.dir, env: append(append([]string{}, u.env...), st.env...)}
			begin := time.Now()
			out, errOut, code := step.run(append(st.args, "--metrics-file", prom)...)
			took := time.Since(begin)
			if code != st.exit {
				t.Fatalf("%s: exit %d, want %d: %s %s", st.name, code, st.exit, out, errOut)
			}
			data, err := os.ReadFile(prom)
			if err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			parser := expfmt.NewTextParser(model.UTF8Validation)
			families, err := parser.TextToMetricFamilies(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s: Prometheus' parser refuses the file: %v\n%s", st.name, err, data)
			}
			single := func(name string) float64 {
				mf, ok := families[name]
				if !ok || len(mf.GetMetric()) != 1 {
					t.Fatalf("%s: no single sample of %s:\n%s", st.name, name, data)
				}
				return mf.GetMetric()[0].GetGauge().GetValue()
			}
			if got := single("payout_run_exit_code"); got != float64(st.exit) {
				t.Errorf("%s: payout_run_exit_code %v, want %d", st.name, got, st.exit)
			}
			if d := single("payout_run_duration_seconds"); d < 0 || d > took.Seconds() {
				t.Errorf("%s: payout_run_duration_seconds %v, want between 0 and the command's %v", st.name, d, took)
			}
			ended := single("payout_run_last_timestamp_seconds")
			if ended < float64(begin.UnixMilli())/1000 || ended > float64(time.Now().UnixMilli())/1000 {
				t.Errorf("%s: payout_run_last_timestamp_seconds %v (%s), want within the command's %s to now",
					st.name, ended, time.UnixMilli(int64(ended*1000)), begin)
			}
			if success := single("payout_run_last_success_timestamp_seconds"); success < float64(begin.Add(-time.Hour).Unix()) || success > ended {
				t.Errorf("%s: payout_run_last_success_timestamp_seconds %v, want the first step's end", st.name, success)
			}
			status, errOut, code := u.run("status")
			if code != 0 {
				t.Fatalf("%s: status exit %d: %s", st.name, code, errOut)
			}
			m := regexp.MustCompile(`(?m)^\s*REJECTED\s+(\d+)\s`).FindStringSubmatch(status)
			if m == nil {
				t.Fatalf("%s: status shows no REJECTED line:\n%s", st.name, status)
			}
			want, _ := strconv.Atoi(m[1])
			if got := gaugeValue(families, "payout_ledger_payouts", "REJECTED"); got != float64(want) {
				t.Errorf("%s: payout_ledger_payouts{state=\"REJECTED\"} %v, `payout status` says %d", st.name, got, want)
			}
		})
	}
}
