package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandRowsPaidByAnotherFile: under cron (no -v, no terminal) a file whose rows another
// file paid is not silent: a warning on stderr, a count in --json, exit 4 unless allowed.
func TestCommandRowsPaidByAnotherFile(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	u := newUser(t, newSandbox(t))
	sample := samplePath(t)
	if _, errOut, code := u.run("run", sample); code != 0 {
		t.Fatalf("first run exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	december := filepath.Join(u.dir, "december.csv")
	if err := os.WriteFile(december, []byte(strings.ReplaceAll(string(data), "Gaji November", "Gaji December")), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := u.run("run", "--json", december)
	if code != 4 || !strings.Contains(errOut, "another file paid them") || !strings.Contains(errOut, "sample-payroll.csv") {
		t.Fatalf("exit %d, stderr %q: want 4 and a warning naming the file that paid them", code, errOut)
	}
	var summary map[string]any
	if err := json.Unmarshal([]byte(out), &summary); err != nil {
		t.Fatalf("--json printed %q: %v", out, err)
	}
	if summary["skipped_other_file"] != float64(50) || summary["skipped"] != float64(50) {
		t.Errorf("summary %s, want 50 rows skipped, all of them paid by another file", out)
	}
	if _, errOut, code := u.run("run", "--allow-paid-elsewhere", december); code != 0 {
		t.Errorf("--allow-paid-elsewhere exit %d: %s", code, errOut)
	}
	if _, errOut, code := u.run("run", sample); code != 0 || errOut != "" {
		t.Errorf("a rerun of the same file exit %d, stderr %q: want 0 and silence", code, errOut)
	}
}

func TestCommandReconcileFailedWithin(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	u := newUser(t, newSandbox(t))
	if _, errOut, code := u.run("run", samplePath(t)); code != 0 {
		t.Fatalf("run exit %d: %s", code, errOut)
	}
	if _, errOut, code := u.run("reconcile", "--failed-within", "-1"); code != 2 || !strings.Contains(errOut, "--failed-within") {
		t.Errorf("--failed-within -1: exit %d, stderr %q, want 2 naming the flag", code, errOut)
	}
	out, errOut, code := u.run("reconcile", "--json", "--failed-within", "3")
	if code != 0 || !strings.Contains(out, "refused in the last 3 days") {
		t.Errorf("--failed-within 3: exit %d, %s %s: want the scope to say it", code, out, errOut)
	}
}
