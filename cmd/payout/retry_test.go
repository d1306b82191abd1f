package main_test

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The retry file of a run with a rejected row and a row the service refused holds exactly those
// rows; corrected and run, it pays them, and run again it pays nothing more.
func TestCommandRetryFile(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	u := newUser(t, sb)
	input := filepath.Join(u.dir, "payroll.csv")
	// The service refuses an amount over its limit, and creates nothing.
	data := "external_invoice_ref,amount,recipient_reference,bank,third_party_account_no,notes\n" +
		"CR-1,100.00,Aisyah,Maybank,0123456781,\n" +
		"CR-2,12.345,Bala,Maybank,0123456782,typo\n" +
		"CR-3,2000000.00,Chong,Maybank,0123456783,too much\n"
	if err := os.WriteFile(input, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := u.run("run", "--allow-partial", "--json", input)
	if code != 4 {
		t.Fatalf("run exit %d, want 4: %s %s", code, out, errOut)
	}
	var summary struct {
		RunID     string   `json:"run_id"`
		RetryFile string   `json:"retry_file"`
		Reports   []string `json:"reports"`
		Failed    int      `json:"failed"`
	}
	if err := json.Unmarshal([]byte(out), &summary); err != nil {
		t.Fatalf("--json printed %q: %v", out, err)
	}
	wantName := "payroll." + summary.RunID + ".retry.csv"
	if summary.Failed != 1 || filepath.Base(summary.RetryFile) != wantName || !slices.Contains(summary.Reports, summary.RetryFile) {
		t.Fatalf("--json: %s; want one failed row and retry_file %s among the reports", out, wantName)
	}
	retry := summary.RetryFile
	if !filepath.IsAbs(retry) {
		retry = filepath.Join(u.dir, retry)
	}
	f, err := os.Open(retry)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	wantHeader := []string{"external_invoice_ref", "amount", "recipient_reference", "bank", "third_party_account_no", "notes", "retry_reason"}
	if !slices.Equal(recs[0], wantHeader) || len(recs) != 3 || recs[1][0] != "CR-2" || recs[2][0] != "CR-3-R1" {
		t.Fatalf("retry file %q", recs)
	}
	if !strings.HasPrefix(recs[1][6], "rejected: ") || !strings.HasPrefix(recs[2][6], "failed: ") {
		t.Errorf("why %q, %q", recs[1][6], recs[2][6])
	}

	// The user corrects both amounts. A retry pays what was refused, as recorded: the changed
	// amount under the retry's reference is refused, with both amounts, and nothing is paid.
	recs[1][1], recs[2][1] = "12.34", "2000.00"
	writeRecords(t, retry, recs)
	out, errOut, code = u.run("run", retry)
	if code != 3 || !strings.Contains(out+errOut, "line 3") ||
		!strings.Contains(out+errOut, "amount 2000.00 here, 2000000.00 in CR-3, the payout it retries") {
		t.Fatalf("retry row with another amount: exit %d: %s %s", code, out, errOut)
	}
	// As the message says, the corrected payout gets a reference of its own; then the file pays,
	// and run again it pays nothing more.
	recs[2][0] = "CR-3-FIX"
	writeRecords(t, retry, recs)
	for round := 1; round <= 2; round++ {
		if out, errOut, code := u.run("run", "--json", retry); code != 0 || strings.Contains(out, `"retry_file"`) {
			t.Fatalf("retry run %d: exit %d: %s %s", round, code, out, errOut)
		}
	}
	counts := sb.CreateCounts()
	for ref, n := range map[string]int{"CR-1": 1, "CR-2": 1, "CR-3": 0, "CR-3-R1": 0, "CR-3-FIX": 1} {
		if counts[ref] != n {
			t.Errorf("%s created %d times, want %d", ref, counts[ref], n)
		}
	}
}

func writeRecords(t *testing.T, path string, recs [][]string) {
	t.Helper()
	var b strings.Builder
	w := csv.NewWriter(&b)
	if err := w.WriteAll(recs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}
