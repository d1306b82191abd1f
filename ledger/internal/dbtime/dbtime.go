// Package dbtime is how the ledger's tables hold times: fixed-width UTC text, so that stored
// times sort, and compare in SQL, as text on either engine.
package dbtime

import "time"

// Layout is the text of every time the ledger stores.
const Layout = "2006-01-02T15:04:05.000000000Z"

// Format is t as the ledger stores it; "" for the zero time.
func Format(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(Layout)
}

// Parse reads a time the ledger stored; "" is the zero time.
func Parse(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse(Layout, s)
}
