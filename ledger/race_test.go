//go:build race

package ledger_test

// raceEnabled shrinks the large-file test: the race detector slows the transpiled SQLite ~20x.
const raceEnabled = true
