// Package words writes for people what several packages write alike: times in the operator's
// zone, a spreadsheet cell's text made safe and read back, and the words of a reconciliation's
// mismatches.
package words

import (
	"strings"
	"time"
)

// TimeLayout is how every time a person reads is written: the wall clock of the operator's zone
// with its offset, e.g. "2026-11-27 05:53:48 +08:00". Machine outputs use RFC 3339 instead.
const TimeLayout = "2006-01-02 15:04:05 -07:00"

// ClockLayout is a time of day with its offset, for a person reading a line that names the day
// elsewhere or means today: "05:53:48 +08:00".
const ClockLayout = "15:04:05 -07:00"

// FormatTime writes t for people in zone (UTC when zone is nil), in TimeLayout; empty for the
// zero time.
func FormatTime(t time.Time, zone *time.Location) string {
	if t.IsZero() {
		return ""
	}
	return t.In(orUTC(zone)).Format(TimeLayout)
}

// FormatClock writes t's time of day for people in zone (UTC when nil), in ClockLayout.
func FormatClock(t time.Time, zone *time.Location) string {
	return t.In(orUTC(zone)).Format(ClockLayout)
}

// FormatDay writes the day of t in zone (UTC when nil), for messages that name the day of an
// earlier run: "2026-11-27".
func FormatDay(t time.Time, zone *time.Location) string {
	return t.In(orUTC(zone)).Format(time.DateOnly)
}

// ZoneText names zone for a report's header, with its offset at t (the offset of a zone with
// summer time depends on the date): "Asia/Kuala_Lumpur (UTC+08:00)". A zone without a name of
// its own (the system's, when it cannot be named) is shown by its abbreviation.
func ZoneText(zone *time.Location, at time.Time) string {
	zone = orUTC(zone)
	if at.IsZero() {
		at = time.Now()
	}
	abbr, _ := at.In(zone).Zone()
	offset := "UTC" + at.In(zone).Format("-07:00")
	name := zone.String()
	if name == "Local" || name == "" {
		name = "local time"
		if abbr != "" && !strings.ContainsAny(abbr[:1], "+-") {
			name += " " + abbr
		}
	}
	switch name {
	case "UTC", "Etc/UTC", "Etc/UCT", "Etc/Universal", "Etc/Zulu", "UCT", "Universal", "Zulu":
		return "UTC (UTC+00:00)"
	}
	return name + " (" + offset + ")"
}

func orUTC(zone *time.Location) *time.Location {
	if zone == nil {
		return time.UTC
	}
	return zone
}
