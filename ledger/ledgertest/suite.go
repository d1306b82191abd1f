package ledgertest

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/ledger"
)

// Engine is what the suite needs of an engine.
type Engine struct {
	// New makes an empty ledger for one test, and closes it when the test ends.
	New func(tb testing.TB) ledger.Ledger
	// Again opens a second handle on the ledger l (another process's view of it, as the run and
	// the callback receiver each have one), closed when the test ends.
	Again func(tb testing.TB, l ledger.Ledger) ledger.Ledger
	// SQL is the database under l, for the few checks that read a table no operation returns
	// (the stored callbacks); the suite's statements are ones every engine accepts.
	SQL func(tb testing.TB, l ledger.Ledger) *sql.DB
	// Hold starts a paying process's hold on the ledger l (on SQLite the file lock): ok is false
	// when another process's hold keeps it from starting. The hold ends when the test does, if
	// not before.
	Hold func(tb testing.TB, l ledger.Ledger) (h Holder, ok bool)
}

// Run runs the whole suite on e, each test on a new ledger.
func Run(t *testing.T, e Engine) {
	for _, c := range []struct {
		name string
		test func(*testing.T, Engine)
	}{
		{"RecordKeepsEachPayoutOnce", testRecord},
		{"EveryMoveOfTheTableIsApplied", testLegalMoves},
		{"EveryOtherMoveIsRefused", testIllegalMoves},
		{"AStaleFromIsRefused", testStaleFrom},
		{"ARefusedCallLeavesNothing", testRefusedCallIsAtomic},
		{"ConcurrentWritersKeepOneChain", testConcurrentWriters},
		{"TwoHandlesKeepOneChain", testTwoHandles},
		{"EveryKindOfWriteAtOnceKeepsOneChain", testMixedWriters},
		{"ClaimsNameTheirProcessAndHoldsTellWhoIsGone", testClaims},
		{"ChainVerifiesAndHeadAdvances", testChain},
		{"TotalsEqualAScan", testTotals},
		{"RunsAreFoundByFilter", testFindRuns},
		{"PayoutsAreFoundByFilter", testFindPayouts},
		{"ARetryIsOnePerPayout", testRetries},
		{"NameChecksAreKeptBesideThePayout", testNameChecks},
		{"RepeatsAndRejectsAreFound", testRepeatsAndRejects},
		{"ARunsEvidenceIsItsPayoutsEvents", testEvidence},
		{"RunLinesJoinTheirPayouts", testRunLines},
		{"CallbacksAreStoredOnceAndReplaysCounted", testCallbacks},
		{"ApprovalPolicyIsInTheChain", testApprovalPolicy},
		{"PurgeMasksAndKeepsTheChain", testPurge},
		{"ConsoleSessionsAreSharedByHandles", testConsoleSessions},
		{"ConsoleVisitorsAreBounded", testConsoleVisitorsBounded},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Each test has a ledger of its own: they run side by side, as an engine's users do.
			t.Parallel()
			c.test(t, e)
		})
	}
}

// t0 is when the suite's runs start; engines keep their own clock for events.
var t0 = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// payout is a valid payout of 10.00 (or amount) on line line.
func payout(ref, amount string, line int) ledger.Payout {
	return ledger.Payout{Ref: ref, Line: line, Recipient: "Ali " + ref, ProviderID: 7, Bank: "Maybank",
		Account: "0123456789", Amount: decimal.RequireFromString(amount), Description: "salary"}
}

// rowOf is p's input line.
func rowOf(p ledger.Payout) ledger.RunRow {
	return ledger.RunRow{Line: p.Line, Ref: p.Ref, Recipient: p.Recipient, ProviderID: p.ProviderID, Bank: p.Bank,
		Account: p.Account, Amount: p.Amount.StringFixed(2), Description: p.Description}
}

// addRun adds a running run of file <id>.csv, started hours after t0.
func addRun(tb testing.TB, l ledger.Ledger, id string, hours int) ledger.Run {
	tb.Helper()
	r := ledger.Run{ID: id, Kind: "run", File: id + ".csv", FileSHA256: "sha-" + id,
		StartedAt: t0.Add(time.Duration(hours) * time.Hour), Status: "running", Source: "sha-" + id}
	must(tb, l.AddRun(context.Background(), r))
	return r
}

// seed adds run runID and records n fresh payouts <runID>-0..n-1 of 10.00, on lines 2...
func seed(tb testing.TB, l ledger.Ledger, runID string, n int) []ledger.Payout {
	tb.Helper()
	addRun(tb, l, runID, 0)
	ps := make([]ledger.Payout, n)
	rows := make([]ledger.RunRow, n)
	for i := range ps {
		ps[i] = payout(fmt.Sprintf("%s-%d", runID, i), "10.00", i+2)
		rows[i] = rowOf(ps[i])
	}
	must(tb, l.Record(context.Background(), runID, rows, ps))
	return ps
}

// moveTo applies the moves that take p from READY to the state path ends in.
func moveTo(tb testing.TB, l ledger.Ledger, ref string, path ...ledger.State) {
	tb.Helper()
	from := ledger.Ready
	for _, s := range path {
		must(tb, l.Apply(context.Background(), ledger.Change{Ref: ref, From: from, To: s, Detail: "to " + string(s)}))
		from = s
	}
}

// settle takes the first half of ps to SUCCEEDED, by way of the answer and the callback, and
// leaves the rest READY.
func settle(tb testing.TB, l ledger.Ledger, ps []ledger.Payout) {
	tb.Helper()
	for i, p := range ps[:len(ps)/2] {
		moveTo(tb, l, p.Ref, ledger.Submitting, ledger.Submitted)
		must(tb, l.Apply(context.Background(), ledger.Change{Ref: p.Ref, From: ledger.Submitted, To: ledger.Succeeded,
			InvoiceNo: fmt.Sprintf("INV-%d", i), Payload: `{"orgn_third_party_account_no":"` + p.Account + `"}`}))
	}
}

func mustGet(tb testing.TB, l ledger.Ledger, ref string) ledger.Payout {
	tb.Helper()
	p, err := l.Get(context.Background(), ref)
	must(tb, err)
	return p
}

func mustEvents(tb testing.TB, l ledger.Ledger, ref string) []ledger.Event {
	tb.Helper()
	evs, err := l.Events(context.Background(), ref)
	must(tb, err)
	return evs
}

// intact verifies the whole chain and fails on any finding.
func intact(tb testing.TB, l ledger.Ledger) ledger.ChainReport {
	tb.Helper()
	rep, err := l.VerifyChain(context.Background())
	must(tb, err)
	for _, f := range rep.Findings {
		tb.Errorf("verify: %s", f)
	}
	return rep
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
