package intake

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/ledger"
)

// recordedBy is a ledger whose Lookup says another run recorded every payout: what a pass sees
// when another process recorded the same retry reference between its look-up and its Record.
type recordedBy struct {
	*ledger.DB
	runID string
}

func (l recordedBy) Lookup(ctx context.Context, refs []string, how ledger.LookupFields) (map[string]ledger.Payout, error) {
	found, err := l.DB.Lookup(ctx, refs, how)
	for ref, p := range found {
		p.RunID = l.runID
		found[ref] = p
	}
	return found, err
}

// TestOnlyTheRunThatRecordsARetryLinksIt: a payout recorded as the retry of a refused one is
// linked to it, with one event, by the run that recorded it, and by no other.
func TestOnlyTheRunThatRecordsARetryLinksIt(t *testing.T) {
	t.Parallel()
	for _, other := range []bool{false, true} {
		t.Run(fmt.Sprintf("recorded by another run %t", other), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db, err := ledger.Create(ctx, filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			payout := func(ref, runID string) ([]ledger.RunRow, []ledger.Payout) {
				p := ledger.Payout{Ref: ref, RunID: runID, Line: 2, Recipient: "Ali", ProviderID: 1, Bank: "Maybank",
					Account: "1234567890", Amount: decimal.RequireFromString("10.00"), State: ledger.Ready}
				return []ledger.RunRow{{RunID: runID, Line: 2, Ref: ref, Recipient: p.Recipient, ProviderID: 1, Bank: p.Bank,
					Account: p.Account, Amount: "10.00"}}, []ledger.Payout{p}
			}
			for _, id := range []string{"run-1", "run-2"} {
				if err := db.AddRun(ctx, ledger.Run{ID: id, Kind: ledger.KindRun, StartedAt: time.Now(), Status: ledger.RunRunning}); err != nil {
					t.Fatal(err)
				}
			}
			lines, fresh := payout("OLD", "run-1")
			if err := db.Record(ctx, "run-1", lines, fresh); err != nil {
				t.Fatal(err)
			}
			retry, err := db.ClaimRetry(ctx, "OLD", "run-1", time.Now(), func(root string, n int) string { return fmt.Sprintf("%s-R%d", root, n) })
			if err != nil {
				t.Fatal(err)
			}
			var l RecordLedger = db
			if other {
				l = recordedBy{DB: db, runID: "run-other"}
			}
			rc := &Recorder{cfg: RecordConfig{Ledger: l, Log: slog.New(slog.DiscardHandler), Run: ledger.Run{ID: "run-2"}}}
			lines, fresh = payout(retry.New, "run-2")
			if err := rc.store(ctx, lines, fresh); err != nil {
				t.Fatal(err)
			}
			events, err := db.Events(ctx, retry.New)
			if err != nil {
				t.Fatal(err)
			}
			links := 0
			for _, e := range events {
				if strings.Contains(e.Detail, "a retry of OLD") {
					links++
				}
			}
			if want := map[bool]int{false: 1, true: 0}[other]; links != want {
				t.Errorf("%s's trail names OLD in %d events, want %d", retry.New, links, want)
			}
		})
	}
}
