package batch_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/intake"
	"github.com/payout/payout/batch/internal/batchtest"
)

func statement(t *testing.T, cfg batch.Config, path string) (intake.Plan, string) {
	t.Helper()
	plan, err := batch.NewRunner(cfg).PlanOf(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := plan.WriteStatement(&b, time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	return plan, b.String()
}

// TestPlanStatement: the plan statement lists every payable row as paid (provider id resolved,
// account digits), the rejected lines, the totals and the valid-until; it is the same with the
// ledger and without it, and any change of who gets how much changes it.
func TestPlanStatement(t *testing.T) {
	t.Parallel()
	h := batchtest.NewUnthrottledHarness(t, sandbox.Options{}, 4)
	rows := batchtest.Payroll(3, "PL")
	path := batchtest.WritePayroll(t, h.Dir, "plan.csv", rows)
	plan, text := statement(t, h.Cfg, path)
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if lines[0] != intake.PlanVersion || !strings.HasPrefix(lines[1], "file-sha256\t"+plan.FileSHA256) || lines[2] != "sheet\t-" ||
		lines[len(lines)-1] != "valid-until\t2026-11-30" || len(lines) != 3+3+3 {
		t.Fatalf("statement:\n%s", text)
	}
	row := regexp.MustCompile("^row\t2\t\"PL-00001\"\t[0-9]+\t[0-9]+\t[0-9]+\\.[0-9]{2}\t\".+\"$")
	if !row.MatchString(lines[3]) {
		t.Errorf("first row line %q", lines[3])
	}
	if want := "rows\t3\tpayable\t3\trejected\t0"; lines[6] != want {
		t.Errorf("counts %q, want %q", lines[6], want)
	}
	noLedger := h.Cfg
	noLedger.Ledger = nil
	if _, again := statement(t, noLedger, path); again != text {
		t.Errorf("the statement differs without the ledger:\n%s\n%s", text, again)
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	changed := filepath.Join(h.Dir, "changed.csv")
	account := rows[1].Account
	if err := os.WriteFile(changed, bytes.Replace(data, []byte(account), []byte(account[:len(account)-1]+"9"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	other, otherText := statement(t, h.Cfg, changed)
	if other.Digest == plan.Digest || otherText == text {
		t.Error("a changed account leaves the plan as it was")
	}
}
