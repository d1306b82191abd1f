package main_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestVerboseLogsEveryStep: -v logs each step of a run, and each payout's changes at debug level
// with its reference and its account masked; without -v a run that goes well logs nothing.
func TestVerboseLogsEveryStep(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	_, errOut, code := u.run("run", "-v", "--log-format", "json", samplePath(t))
	if code != 0 {
		t.Fatalf("run -v exit %d: %s", code, errOut)
	}
	steps := map[string]int{}
	sending := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		msg, _ := rec["msg"].(string)
		steps[msg]++
		if msg == "payout READY -> SUBMITTING" {
			ref, _ := rec["ref"].(string)
			account, _ := rec["account"].(string)
			if rec["level"] != "DEBUG" || ref == "" || !strings.HasPrefix(account, "****") {
				t.Errorf("state change logged as %s; want DEBUG with ref and a masked account", line)
			}
			sending[ref] = true
		}
	}
	for _, step := range []string{"run started", "reading and validating the file", "file validated", "recording and sending",
		"chunk recorded", "payout SUBMITTING -> SUBMITTED", "reports written", "run finished"} {
		if steps[step] == 0 {
			t.Errorf("-v does not log %q; logged: %v", step, steps)
		}
	}
	if len(sending) != 50 {
		t.Errorf("-v logged the sending of %d payouts, want all 50", len(sending))
	}
	data, err := os.ReadFile(samplePath(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n")[1:] {
		if f := strings.Split(line, ","); len(f) > 3 && strings.Contains(errOut, f[3]) {
			t.Errorf("the log holds the whole account number %s", f[3])
		}
	}

	// The same file again without -v: nothing to say.
	if _, errOut, code := u.run("run", samplePath(t)); code != 0 || errOut != "" {
		t.Errorf("run without -v: exit %d, stderr %q; want 0 and nothing", code, errOut)
	}
}
