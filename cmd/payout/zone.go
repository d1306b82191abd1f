package main

import (
	"flag"
	"path/filepath"
	"strings"
	"time"
	_ "time/tzdata" // zone names work on a host without a zoneinfo database

	"github.com/payout/payout/batch/words"
)

// envTZ names the operator's time zone: every time a person reads is shown in it.
const envTZ = "PAYOUT_TZ"

// zoneOption is the --tz flag of the commands that show times to people.
type zoneOption struct{ name string }

func (z *zoneOption) register(fs *flag.FlagSet) {
	fs.StringVar(&z.name, "tz", "", "show times in the time zone `NAME`, e.g. Asia/Kuala_Lumpur or UTC (default $"+envTZ+", else the system's)")
}

// location is the operator's zone: --tz, else PAYOUT_TZ, else the system's. An unknown name is a
// usage error that names it.
func (z *zoneOption) location(getenv func(string) string) (*time.Location, error) {
	field, name := "--tz", strings.TrimSpace(z.name)
	if name == "" {
		field, name = envTZ, strings.TrimSpace(getenv(envTZ))
	}
	if name == "" {
		return systemZone(getenv), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "Local" {
		return nil, usageError("%s=%q: not a time zone: use an IANA name such as Asia/Kuala_Lumpur or UTC", field, name)
	}
	return loc, nil
}

// systemZone is the system's zone, by its IANA name when it can be found (TZ, or the target of
// /etc/localtime), so that reports can name it; else time.Local, shown by its abbreviation.
func systemZone(getenv func(string) string) *time.Location {
	if name := strings.TrimPrefix(getenv("TZ"), ":"); name != "" {
		if loc, err := time.LoadLocation(name); err == nil {
			return loc
		}
		return time.Local
	}
	if target, err := filepath.EvalSymlinks("/etc/localtime"); err == nil {
		if _, name, ok := strings.Cut(target, "zoneinfo/"); ok {
			if loc, err := time.LoadLocation(name); err == nil {
				return loc
			}
		}
	}
	return time.Local
}

// humanTime writes t for people in zone, as the reports do.
func humanTime(t time.Time, zone *time.Location) string { return words.FormatTime(t, zone) }
