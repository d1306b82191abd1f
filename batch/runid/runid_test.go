package runid_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/payout/payout/batch/runid"
)

func TestNew(t *testing.T) {
	start := time.Date(2026, 11, 22, 16, 25, 0, 0, time.FixedZone("MYT", 8*3600))
	id := runid.New(start)
	if !regexp.MustCompile(`^20261122T082500Z-[0-9a-f]{12}$`).MatchString(id) {
		t.Errorf("run id %q: want the UTC start to the second, a dash and 12 hex digits", id)
	}
}

// Runs started in the same second, as a folder of files starts them, each get an ID of their own.
func TestRunIDsOfOneSecondDiffer(t *testing.T) {
	now := time.Now()
	seen := make(map[string]bool)
	for range 1000 {
		id := runid.New(now)
		if seen[id] {
			t.Fatalf("run ID %s made twice in one second", id)
		}
		seen[id] = true
	}
}

func TestStampPatternMatchesStampsOnly(t *testing.T) {
	whole := regexp.MustCompile(`^` + runid.StampPattern + `$`)
	for _, s := range []string{
		runid.Stamp(time.Date(2026, 11, 24, 5, 10, 11, 0, time.UTC)),
		runid.Stamp(time.Date(1999, 1, 2, 23, 59, 59, 0, time.UTC)),
		"99999999T999999Z", // the shape of a stamp is all the pattern knows
	} {
		if !whole.MatchString(s) {
			t.Errorf("%q is not matched by %s", s, runid.StampPattern)
		}
	}
	for _, s := range []string{"20261124T051011", "20261124-051011Z", "2026112T051011Z", "20261124T051011z", "2026112aT051011Z"} {
		if whole.MatchString(s) {
			t.Errorf("%q is matched by %s", s, runid.StampPattern)
		}
	}
}
