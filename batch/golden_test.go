package batch_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/internal/batchtest"
)

var update = flag.Bool("update", false, "rewrite the golden files of dry-run reports")

// TestDryRunReportGolden pins the dry-run result CSV an accountant gets for the sample and for a
// file with one broken row per rule.
func TestDryRunReportGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, input string
		exit        int
	}{
		{"sample", "../testdata/sample-payroll.csv", exitcode.OK},
		{"sample-xlsx", "../testdata/sample-payroll.xlsx", exitcode.OK},
		{"mixed", "testdata/golden/mixed.csv", exitcode.Rejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := batchtest.NewHarness(t, sandbox.Options{})
			res := h.Run(context.Background(), tt.input, func(c *batch.Config) { c.DryRun = true })
			if res.ExitCode != tt.exit {
				t.Fatalf("exit %d, want %d: %+v", res.ExitCode, tt.exit, res)
			}
			got, err := os.ReadFile(batchtest.ResultCSV(t, res))
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "golden", tt.name+".result.csv")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("dry-run report differs from %s (run with -update if the change is right):\n%s", golden, got)
			}
		})
	}
}
