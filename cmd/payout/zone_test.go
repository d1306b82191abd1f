package main_test

import (
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// startedIn finds the run's start time in an HTML report, and every offset its times carry.
func startedIn(t *testing.T, path string) (time.Time, map[string]bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(string(data))
	m := regexp.MustCompile(`<th scope="row">Started</th><td>([^<]+)</td>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("%s: no start time", path)
	}
	at, err := time.Parse("2006-01-02 15:04:05 -07:00", m[1])
	if err != nil {
		t.Fatalf("%s: start time %q: %v", path, m[1], err)
	}
	seen := map[string]bool{}
	for _, o := range regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ([+-]\d\d:\d\d)`).FindAllStringSubmatch(page, -1) {
		seen[o[1]] = true
	}
	return at, seen
}

// TestCommandTimesInTheOperatorsZone: a run on a host whose zone is Asia/Kuala_Lumpur reports
// in it; the same run's reports written again with PAYOUT_TZ=UTC show the same instant 8 hours
// earlier on the clock, and `status` follows --tz. Each report shows one zone and names it.
func TestCommandTimesInTheOperatorsZone(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	u.env = append(u.env, "TZ=Asia/Kuala_Lumpur")
	if out, errOut, code := u.run("run", samplePath(t)); code != 0 {
		t.Fatalf("run exit %d: %s %s", code, out, errOut)
	}
	own, err := filepath.Glob(filepath.Join(u.dir, "reports", "sample-payroll.*.report.html"))
	if err != nil || len(own) != 1 {
		t.Fatalf("the run's HTML report: %v (%v)", own, err)
	}
	runID := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(own[0]), "sample-payroll."), ".report.html")
	u.env = append(u.env, "PAYOUT_TZ=UTC")
	out, errOut, code := u.run("report", runID)
	if code != 0 {
		t.Fatalf("report exit %d: %s %s", code, out, errOut)
	}
	regenerated := filepath.Join(u.dir, strings.Fields(out)[2])
	klAt, klOffsets := startedIn(t, own[0])
	utcAt, utcOffsets := startedIn(t, regenerated)
	if !klAt.Equal(utcAt) || klAt.Format("15:04") == utcAt.Format("15:04") {
		t.Errorf("start %s (system zone) and %s (PAYOUT_TZ=UTC): want one instant shown on two clocks", klAt, utcAt)
	}
	if _, off := klAt.Zone(); off != 8*3600 {
		t.Errorf("start %s: want the offset +08:00 of Asia/Kuala_Lumpur", klAt)
	}
	if len(klOffsets) != 1 || !klOffsets["+08:00"] || len(utcOffsets) != 1 || !utcOffsets["+00:00"] {
		t.Errorf("offsets shown: %v in the run's report, %v in the one written with PAYOUT_TZ=UTC; want one zone each", klOffsets, utcOffsets)
	}
	for path, zone := range map[string]string{own[0]: "Asia/Kuala_Lumpur (UTC&#43;08:00)", regenerated: "UTC (UTC&#43;00:00)"} {
		if data, _ := os.ReadFile(path); !strings.Contains(string(data), `<td id="time-zone">`+zone+`</td>`) {
			t.Errorf("%s: the header does not name the zone %s", filepath.Base(path), zone)
		}
	}
	out, errOut, code = u.run("status", "--tz", "Asia/Kuala_Lumpur")
	if code != 0 || !strings.Contains(out, "times in Asia/Kuala_Lumpur (UTC+08:00)") || !strings.Contains(out, klAt.Format("2006-01-02 15:04:05 -07:00")) {
		t.Errorf("status --tz Asia/Kuala_Lumpur: exit %d, want the run started at %s:\n%s%s", code, klAt.Format("2006-01-02 15:04:05 -07:00"), out, errOut)
	}
	for _, args := range [][]string{{"status", "--tz", "Mars/Olympus"}, {"report", "--tz", "Mars/Olympus", runID}} {
		if _, errOut, code := u.run(args...); code != 2 || !strings.Contains(errOut, `--tz="Mars/Olympus"`) {
			t.Errorf("%v: exit %d, want 2 naming the value: %s", args, code, errOut)
		}
	}
	// Scripts read --json: its times are RFC 3339 in UTC whatever the operator's zone; people
	// read the text log, in theirs.
	out, errOut, code = u.run("run", "-v", "--json", "--tz", "Asia/Kuala_Lumpur", samplePath(t))
	if !regexp.MustCompile(`(?m)^time="\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+08:00" `).MatchString(errOut) {
		t.Errorf("run -v --tz Asia/Kuala_Lumpur: the log's times are not in the zone:\n%s", errOut)
	}
	var res struct {
		StartedAt string `json:"started_at"`
		EndedAt   string `json:"ended_at"`
	}
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil {
		t.Fatalf("run --json again: exit %d (%v): %s %s", code, err, out, errOut)
	}
	for _, v := range []string{res.StartedAt, res.EndedAt} {
		if at, err := time.Parse(time.RFC3339Nano, v); err != nil || !strings.HasSuffix(v, "Z") || at.IsZero() {
			t.Errorf("run --json: time %q, want RFC 3339 in UTC (%v)", v, err)
		}
	}
	u.env = append(u.env, "PAYOUT_TZ=Mars/Olympus")
	if _, errOut, code := u.run("status"); code != 2 || !strings.Contains(errOut, `PAYOUT_TZ="Mars/Olympus"`) {
		t.Errorf("status with PAYOUT_TZ=Mars/Olympus: exit %d, want 2 naming it: %s", code, errOut)
	}
}
