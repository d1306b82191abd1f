//go:build race

package ledger_test

// raceEnabled shrinks the large-file test: the race detector slows the transpiled SQLite many
// times over, and fewer rows still cover the chunked inserts.
const raceEnabled = true
