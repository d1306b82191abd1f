// Package runid makes the ids of runs, and the time stamps that file names share with them.
//
// A run id is the run's start in UTC to the second, then six random bytes in hex:
// 20261122T082500Z-3f9a0c11d2e4. Reports, retry files and folder mode stamp their names with the
// same layout, so that a name sorts and reads as the run's own id does.
package runid

import (
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"strings"
	"time"
	"unicode"
)

// TimeLayout is the time.Format layout of a run id's time and of every stamp in a file name.
const TimeLayout = "20060102T150405Z"

// StampPattern is a regular expression matching any time written in TimeLayout (every digit a
// digit, the rest as written), for reading a stamp back out of a name.
var StampPattern = patternOf(TimeLayout)

// New makes a sortable, readable run id for a run started at t.
func New(t time.Time) string {
	// Six random bytes: runs started in the same second (a folder of files, a test) must not
	// share an ID, which the ledger would refuse.
	var b [6]byte
	_, _ = rand.Read(b[:])
	return Stamp(t) + "-" + hex.EncodeToString(b[:])
}

// Stamp is t in UTC written in TimeLayout.
func Stamp(t time.Time) string {
	return t.UTC().Format(TimeLayout)
}

func patternOf(layout string) string {
	var b strings.Builder
	for _, r := range layout {
		if unicode.IsDigit(r) {
			b.WriteString(`\d`)
		} else {
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	return b.String()
}
