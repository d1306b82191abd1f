package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/ledger"
)

// testCallbacks: a callback is stored once; a second delivery of the same body (its token) is
// counted on the first one's row; callbacks without a token are each stored.
func testCallbacks(t *testing.T, e Engine) {
	if e.SQL == nil {
		t.Skip("the engine gives no SQL handle to read the stored callbacks")
	}
	l := e.New(t)
	ctx := context.Background()
	body := ledger.StoredCallback{InvoiceNo: "INV-1", Verdict: "applied", Payload: `{"a":1}`, TokenSHA256: strings.Repeat("ab", 32)}
	for range 3 {
		must(t, l.StoreCallback(ctx, body))
	}
	for range 2 {
		must(t, l.StoreCallback(ctx, ledger.StoredCallback{InvoiceNo: "INV-9", Verdict: "unknown-invoice", Payload: "{}"}))
	}
	db := e.SQL(t, l)
	var rows, replays int
	must(t, db.QueryRowContext(ctx, `SELECT count(*), COALESCE(sum(replays), 0) FROM callbacks WHERE token_sha256 = $1`, body.TokenSHA256).Scan(&rows, &replays))
	if rows != 1 || replays != 2 {
		t.Errorf("one body delivered three times: %d rows, %d replays; want 1 row, 2 replays", rows, replays)
	}
	must(t, db.QueryRowContext(ctx, `SELECT count(*) FROM callbacks WHERE token_sha256 = ''`).Scan(&rows))
	if rows != 2 {
		t.Errorf("callbacks without a token: %d rows, want 2", rows)
	}
	intact(t, l)
}

// testApprovalPolicy: the policy is the latest policy event; one decided on a policy that has
// changed since is refused; approvals are ledger events of their run; all are in the chain.
// Events about the ledger are found by kind, run, plan or file, and the latest alone.
func testApprovalPolicy(t *testing.T, e Engine) {
	l := e.New(t)
	ctx := context.Background()
	pol, err := l.ApprovalPolicy(ctx)
	if err != nil || pol.Approvals != 0 || pol.Event.ID != 1 || pol.Event.Facts["genesis"] != "init" {
		t.Fatalf("a new ledger's policy: %+v %v, want 0 approvals set by its first event, the init's", pol, err)
	}
	decidedOn := ledger.PolicyRef(pol.Event)
	if _, err := l.AppendLedgerEvents(ctx, ledger.LedgerEvent{Kind: ledger.EventPolicy, Facts: map[string]string{"approvals": "2", "was": "0"}}); !errors.Is(err, ledger.ErrPolicyChanged) {
		t.Fatalf("a policy change that does not say what it replaces: %v, want ErrPolicyChanged", err)
	}
	twice := ledger.LedgerEvent{Kind: ledger.EventPolicy, Facts: map[string]string{"approvals": "2", "was": "0", ledger.FactReplaces: decidedOn}}
	if _, err := l.AppendLedgerEvents(ctx, twice, twice); err == nil {
		t.Fatal("two policy events in one call were appended")
	}
	set, err := l.AppendLedgerEvents(ctx, ledger.LedgerEvent{Kind: ledger.EventPolicy, Detail: "approvals 2", Facts: map[string]string{"approvals": "2", "was": "0", ledger.FactReplaces: decidedOn}})
	must(t, err)
	if _, err := l.AppendLedgerEvents(ctx, ledger.LedgerEvent{Kind: ledger.EventPolicy, Facts: map[string]string{"approvals": "0", ledger.FactReplaces: decidedOn}}); !errors.Is(err, ledger.ErrPolicyChanged) {
		t.Fatalf("a change decided on an old policy: %v, want ErrPolicyChanged", err)
	}
	now, err := l.ApprovalPolicy(ctx)
	if err != nil || now.Approvals != 2 || now.Event.ID != set.ID || now.Event.Hash != set.Hash {
		t.Fatalf("policy %+v %v, want 2 approvals with its event at %v", now, err, set)
	}
	head, err := l.AppendLedgerEvents(ctx,
		ledger.LedgerEvent{RunID: "RUN-1", Kind: ledger.EventApproved, Detail: "approved by alice", Facts: map[string]string{"principal": "alice"}},
		ledger.LedgerEvent{RunID: "RUN-1", Kind: ledger.EventApproved, Detail: "approved by bob", Facts: map[string]string{"principal": "bob"}})
	must(t, err)
	list, err := l.LedgerEvents(ctx, ledger.EventFilter{Kind: ledger.EventApproved, RunID: "RUN-1"})
	if err != nil || len(list) != 2 || list[0].Facts["principal"] != "alice" || list[1].Facts["principal"] != "bob" || list[1].Hash != head.Hash {
		t.Fatalf("approvals of RUN-1: %+v %v", list, err)
	}
	if other, err := l.LedgerEvents(ctx, ledger.EventFilter{Kind: ledger.EventApproved, RunID: "RUN-2"}); err != nil || len(other) != 0 {
		t.Errorf("approvals of another run: %+v %v", other, err)
	}
	if rep := intact(t, l); rep.Events != 4 || rep.Head != head {
		t.Errorf("verify %+v, want 3 events up to %v", rep, head)
	}
	testLedgerEvents(t, l)
}

// testLedgerEvents: each field of an EventFilter selects what it says, oldest first.
func testLedgerEvents(t *testing.T, l ledger.Ledger) {
	ctx := context.Background()
	refusal := func(run, plan, file string) ledger.LedgerEvent {
		return ledger.LedgerEvent{RunID: run, Kind: ledger.EventRejected, Detail: "plan REJECTED by carol",
			Facts: map[string]string{"rejected": "carol: " + run, "plan_sha256": plan, "file_sha256": file}}
	}
	_, err := l.AppendLedgerEvents(ctx, refusal("RUN-3", "plan-a", "file-a"), refusal("RUN-4", "plan-b", "file-a"),
		refusal("RUN-5", "plan-c", "file-c"), ledger.LedgerEvent{RunID: "RUN-5", Kind: ledger.EventApproved, Detail: "approved by dave",
			Facts: map[string]string{"principal": "dave", "plan_sha256": "plan-a", "file_sha256": "file-a"}})
	must(t, err)
	runs := func(es []ledger.LedgerEvent) string {
		var out []string
		for _, e := range es {
			out = append(out, e.Kind+":"+e.RunID)
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		f    ledger.EventFilter
		want string
	}{
		{ledger.EventFilter{Kind: ledger.EventApproved}, "APPROVED:RUN-1,APPROVED:RUN-1,APPROVED:RUN-5"},
		{ledger.EventFilter{Kind: ledger.EventRejected}, "REJECTED:RUN-3,REJECTED:RUN-4,REJECTED:RUN-5"},
		{ledger.EventFilter{Kind: ledger.EventRejected, PlanSHA256: "plan-a", FileSHA256: "file-a"}, "REJECTED:RUN-3,REJECTED:RUN-4"},
		{ledger.EventFilter{Kind: ledger.EventRejected, PlanSHA256: "plan-c", FileSHA256: "file-x"}, "REJECTED:RUN-5"},
		{ledger.EventFilter{Kind: ledger.EventRejected, PlanSHA256: "plan-x", FileSHA256: "file-x"}, ""},
		{ledger.EventFilter{Kind: ledger.EventRejected, FileSHA256: "file-a"}, "REJECTED:RUN-3,REJECTED:RUN-4"},
		{ledger.EventFilter{Kind: ledger.EventRejected, PlanSHA256: "plan-c"}, "REJECTED:RUN-5"},
		{ledger.EventFilter{Kind: ledger.EventRejected, RunID: "RUN-4", PlanSHA256: "plan-a", FileSHA256: "file-a"}, "REJECTED:RUN-4"},
		{ledger.EventFilter{Kind: ledger.EventRejected, Latest: true}, "REJECTED:RUN-5"},
		{ledger.EventFilter{Kind: ledger.EventApproved, RunID: "RUN-1", Latest: true}, "APPROVED:RUN-1"},
		{ledger.EventFilter{Kind: ledger.EventHeadSigned}, ""},
		{ledger.EventFilter{Kind: ledger.EventHeadSigned, Latest: true}, ""},
	} {
		got, err := l.LedgerEvents(ctx, c.f)
		if err != nil || runs(got) != c.want {
			t.Errorf("%+v: %s %v, want %s", c.f, runs(got), err, c.want)
		}
	}
	latest, err := l.LedgerEvents(ctx, ledger.EventFilter{Kind: ledger.EventApproved, RunID: "RUN-1", Latest: true})
	if err != nil || len(latest) != 1 || latest[0].Facts["principal"] != "bob" {
		t.Errorf("the latest approval of RUN-1: %+v %v, want bob's", latest, err)
	}
	if _, err := l.LedgerEvents(ctx, ledger.EventFilter{RunID: "RUN-1"}); err == nil {
		t.Errorf("events of no kind: no error")
	}
	// A plan's statement comes back as it was stored, byte for byte: its readers check its digest.
	statement := "payout-plan v1\nrow\t2\t\"R-1\"\t7\t0123456789\t10.00\t\"Ali \u00e9\"\n"
	_, err = l.AppendLedgerEvents(ctx, ledger.LedgerEvent{Kind: ledger.EventPlan, Detail: "plan",
		Facts: map[string]string{"plan_sha256": "plan-s", "file_sha256": "file-s"}, Payload: statement})
	must(t, err)
	plans, err := l.LedgerEvents(ctx, ledger.EventFilter{Kind: ledger.EventPlan, PlanSHA256: "plan-s"})
	if err != nil || len(plans) != 1 || plans[0].Payload != statement {
		t.Errorf("the plan's event: %+v %v, want its statement %q", plans, err, statement)
	}
	if refusals, err := l.LedgerEvents(ctx, ledger.EventFilter{Kind: ledger.EventRejected}); err != nil || refusals[0].Payload != "" {
		t.Errorf("a refusal's payload: %+v %v, want none", refusals, err)
	}
}

func maskName(s string) string    { return s[:1] + "***" }
func maskAccount(s string) string { return "****" + s[len(s)-4:] }

// testPurge: final payouts are masked, pending ones left and listed, totals and the chain kept,
// and a second purge has nothing to do.
func testPurge(t *testing.T, e Engine) {
	l := e.New(t)
	ctx := context.Background()
	ps := seed(t, l, "r1", 4)
	settle(t, l, ps)
	must(t, l.StoreCallback(ctx, ledger.StoredCallback{InvoiceNo: "INV-0", Verdict: "applied", Payload: `{"orgn_third_party_account_no":"0123456789"}`}))
	before, err := l.Counts(ctx, ledger.CountRead{RejectedRows: true})
	must(t, err)
	req := ledger.PurgeRequest{Before: time.Now().AddDate(10, 0, 0), MaskName: maskName, MaskAccount: maskAccount, Detail: "purged"}
	res, err := l.Purge(ctx, req)
	must(t, err)
	if strings.Join(res.Purged, ",") != ps[0].Ref+","+ps[1].Ref || len(res.Left) != 2 || res.Callbacks != 1 {
		t.Errorf("purged %v, left %d, callbacks %d; want the two final ones, two left, one callback", res.Purged, len(res.Left), res.Callbacks)
	}
	if p := mustGet(t, l, ps[0].Ref); p.Recipient != "A***" || p.Account != "****6789" || p.State != ledger.Succeeded || p.InvoiceNo != "INV-0" {
		t.Errorf("purged payout %+v", p)
	}
	if q := mustGet(t, l, ps[2].Ref); q.Account != "0123456789" {
		t.Errorf("a pending payout was masked: %+v", q)
	}
	after, err := l.Counts(ctx, ledger.CountRead{RejectedRows: true})
	must(t, err)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("totals changed: %v, then %v", before, after)
	}
	intact(t, l)
	for _, ev := range mustEvents(t, l, ps[0].Ref) {
		if strings.Contains(ev.Payload, "0123456789") {
			t.Errorf("event %d of a purged payout still holds its account number: %q", ev.ID, ev.Payload)
		}
	}
	if evs := mustEvents(t, l, ps[0].Ref); evs[len(evs)-1].Detail != "purged" || evs[len(evs)-1].To != ledger.Succeeded {
		t.Errorf("last event %+v, want the purge's", evs[len(evs)-1])
	}
	if e.SQL != nil {
		var leaks int
		must(t, e.SQL(t, l).QueryRowContext(ctx, `SELECT (SELECT count(*) FROM events WHERE payload LIKE '%0123456789%')
			+ (SELECT count(*) FROM callbacks WHERE payload LIKE '%0123456789%')`).Scan(&leaks))
		if leaks != 0 {
			t.Errorf("%d events or callbacks still hold the account number", leaks)
		}
	}
	if res, err = l.Purge(ctx, req); err != nil || len(res.Purged) != 0 {
		t.Errorf("a second purge: %v %v, want nothing purged", res.Purged, err)
	}
}
