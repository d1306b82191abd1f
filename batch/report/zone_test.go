package report_test

import (
	"html"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/batch/words"
)

// humanTimes finds every time written for people in s, and the offsets they carry.
var humanTimes = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ([+-]\d\d:\d\d)`)

// offsets lists the distinct offsets of the times in s.
func offsets(s string) []string {
	var seen []string
	for _, m := range humanTimes.FindAllStringSubmatch(s, -1) {
		if !slices.Contains(seen, m[1]) {
			seen = append(seen, m[1])
		}
	}
	return seen
}

// TestSameRunUnderTwoZones renders one run, and one reconciliation, in UTC and in
// Asia/Kuala_Lumpur: the times differ by the zones' 8 hours, each report shows one zone only, and
// its header names it.
func TestSameRunUnderTwoZones(t *testing.T) {
	kl, err := time.LoadLocation("Asia/Kuala_Lumpur")
	if err != nil {
		t.Fatal(err)
	}
	// The run's start comes from the ledger (UTC) and its end from the clock (the system's zone):
	// the reports must show both in the operator's zone.
	s := sampleSummary()
	s.Started, s.Ended = started.UTC(), ended.In(time.FixedZone("EST", -5*3600))
	s.ApprovedBy, s.ApprovedAt = "siti@finance", started.Add(-time.Hour)
	s.Regenerated = ended.Add(time.Hour)
	for _, c := range []struct {
		zone            *time.Location
		started, header string
		offset          string
	}{
		{time.UTC, "2026-11-22 08:30:00 +00:00", "UTC (UTC+00:00)", "+00:00"},
		{kl, "2026-11-22 16:30:00 +08:00", "Asia/Kuala_Lumpur (UTC+08:00)", "+08:00"},
	} {
		s.Zone = c.zone
		p := writeRun(t, s, sampleRows(t))
		rp, err := report.WriteReconciliation(t.TempDir(), report.ReconSummary{ID: "rec-zone", Started: s.Started,
			Ended: s.Ended, Zone: c.zone}, sampleRecon(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range []struct{ name, text string }{
			{"run HTML", html.UnescapeString(string(readFile(t, p.HTML)))},
			{"run XLSX summary", summaryText(t, p.XLSX)},
			{"reconciliation HTML", html.UnescapeString(string(readFile(t, rp.HTML)))},
			{"reconciliation XLSX summary", summaryText(t, rp.XLSX)},
		} {
			if !strings.Contains(doc.text, c.started) {
				t.Errorf("%s in %s: no start time %q", doc.name, c.zone, c.started)
			}
			if got := offsets(doc.text); len(got) != 1 || got[0] != c.offset {
				t.Errorf("%s in %s: times with offsets %v, want only %s", doc.name, c.zone, got, c.offset)
			}
			if !strings.Contains(doc.text, "Time zone") || !strings.Contains(doc.text, c.header) {
				t.Errorf("%s in %s: the header does not name the zone %q", doc.name, c.zone, c.header)
			}
			if strings.Contains(doc.text, "2026-11-22T") {
				t.Errorf("%s in %s: a time in RFC 3339 form, beside the people's form", doc.name, c.zone)
			}
		}
	}
}

func TestFormatTimeAndZoneText(t *testing.T) {
	kl, err := time.LoadLocation("Asia/Kuala_Lumpur")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 26, 21, 53, 48, 0, time.UTC)
	if got := words.FormatTime(at, kl); got != "2026-11-27 05:53:48 +08:00" {
		t.Errorf("FormatTime in Asia/Kuala_Lumpur = %q", got)
	}
	if got := words.FormatTime(at, nil); got != "2026-11-26 21:53:48 +00:00" {
		t.Errorf("FormatTime with no zone = %q, want UTC", got)
	}
	if got := words.FormatTime(time.Time{}, kl); got != "" {
		t.Errorf("FormatTime of the zero time = %q, want empty", got)
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	if got := words.ZoneText(ny, time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)); got != "America/New_York (UTC-04:00)" {
		t.Errorf("ZoneText in summer = %q", got)
	}
}
