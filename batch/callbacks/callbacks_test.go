package callbacks_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch/callbacks"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/ledger"
)

const cbHashKey = "callback-hash-key-0123456789abcdef"

// cbLogs collects a handler's log lines for the assertions that no secret reaches them.
type cbLogs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *cbLogs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *cbLogs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// cbRig is a ledger in a temporary file and a Handler on a real loopback server.
type cbRig struct {
	tb    testing.TB
	db    *ledger.DB
	store *countingStore // what the Handler is given: db, counting its writes of names alone
	path  string         // the ledger's file
	srv   *httptest.Server
	logs  *cbLogs
	ahead *atomic.Int64 // how far the Handler's clock runs ahead of the ledger's, in nanoseconds
}

// countingStore is the ledger, counting the writes that keep a bank's name without a move.
type countingStore struct {
	ledger.CallbackStore
	nameWrites atomic.Int32
	// afterInvoiceRead, when set, runs once, after the first read of a payout by its invoice
	// number: a run that records the number between the Handler's reads.
	afterInvoiceRead atomic.Pointer[func()]
}

func (c *countingStore) WalkPayouts(ctx context.Context, set ledger.Filter, page int, fn func(ledger.Payout) error) error {
	err := c.CallbackStore.WalkPayouts(ctx, set, page, fn)
	if set.InvoiceNo == "" {
		return err
	}
	if hook := c.afterInvoiceRead.Swap(nil); hook != nil {
		(*hook)()
	}
	return err
}

func (c *countingStore) SetNameCheck(ctx context.Context, ref, displayName, check string) error {
	c.nameWrites.Add(1)
	return c.CallbackStore.SetNameCheck(ctx, ref, displayName, check)
}

func newCBRig(tb testing.TB) *cbRig {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "ledger.db")
	db := batchtest.CreateLedger(tb, path, ledger.Options{Logger: slog.New(slog.DiscardHandler)})
	logs := &cbLogs{}
	store := &countingStore{CallbackStore: db}
	ahead := new(atomic.Int64)
	h, err := callbacks.NewHandler(callbacks.Config{
		Ledger: store, HashKey: []byte(cbHashKey), Now: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) },
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return &cbRig{tb: tb, db: db, store: store, path: path, srv: srv, logs: logs, ahead: ahead}
}

// payout records ref as a run would have (READY) and moves it through states; the invoice
// number is set on the way into SUBMITTED.
func (r *cbRig) payout(ref, invoice, amount string, states ...ledger.State) {
	r.tb.Helper()
	r.payoutTo(ref, "Employee "+ref, invoice, amount, states...)
}

// payoutTo is payout to a named recipient.
func (r *cbRig) payoutTo(ref, recipient, invoice, amount string, states ...ledger.State) {
	r.tb.Helper()
	ctx := context.Background()
	runID := "run-" + ref
	if err := r.db.AddRun(ctx, ledger.Run{ID: runID, Kind: "run", File: ref + ".csv", StartedAt: time.Now(), Status: "running"}); err != nil {
		r.tb.Fatal(err)
	}
	p := ledger.Payout{Ref: ref, RunID: runID, Line: 2, Recipient: recipient, ProviderID: 1, Bank: "Maybank",
		Account: "1234567890", Amount: decimal.RequireFromString(amount), State: ledger.Ready}
	row := ledger.RunRow{RunID: runID, Line: 2, Ref: ref, Recipient: p.Recipient, ProviderID: 1, Bank: "Maybank", Account: p.Account, Amount: amount}
	if err := r.db.Record(ctx, runID, []ledger.RunRow{row}, []ledger.Payout{p}); err != nil {
		r.tb.Fatal(err)
	}
	from := ledger.Ready
	for _, to := range states {
		ch := ledger.Change{Ref: ref, From: from, To: to, RunID: runID, Detail: "test setup", CountAttempt: to == ledger.Submitting}
		if to == ledger.Submitted {
			ch.InvoiceNo = invoice
		}
		if err := r.db.Apply(ctx, ch); err != nil {
			r.tb.Fatalf("setup %s %s→%s: %v", ref, from, to, err)
		}
		from = to
	}
}

func (r *cbRig) get(ref string) ledger.Payout {
	r.tb.Helper()
	p, err := r.db.Get(context.Background(), ref)
	if err != nil {
		r.tb.Fatal(err)
	}
	return p
}

// nameCheck is the bank's name the ledger holds for ref's account, and its verdict.
func (r *cbRig) nameCheck(ref string) ledger.NameCheck {
	r.tb.Helper()
	checks, err := r.db.NameChecks(context.Background(), ledger.NameFilter{Refs: []string{ref}})
	if err != nil {
		r.tb.Fatal(err)
	}
	if len(checks) == 0 {
		return ledger.NameCheck{}
	}
	return checks[0]
}

func (r *cbRig) events(ref string) []ledger.Event {
	r.tb.Helper()
	evs, err := r.db.Events(context.Background(), ref)
	if err != nil {
		r.tb.Fatal(err)
	}
	return evs
}

// stored reads the callbacks table as whoever inspects the ledger's file would, oldest first.
// replays is the replays column of the stored callbacks, by id.
func (r *cbRig) replays() []int {
	r.tb.Helper()
	sdb, err := sql.Open("sqlite", r.path)
	if err != nil {
		r.tb.Fatal(err)
	}
	defer sdb.Close()
	rows, err := sdb.Query(`SELECT replays FROM callbacks ORDER BY id`)
	if err != nil {
		r.tb.Fatal(err)
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var n int
		if err := rows.Scan(&n); err != nil {
			r.tb.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

func (r *cbRig) stored() []ledger.StoredCallback {
	r.tb.Helper()
	sdb, err := sql.Open("sqlite", r.path)
	if err != nil {
		r.tb.Fatal(err)
	}
	defer sdb.Close()
	rows, err := sdb.Query(`SELECT invoice_no, verdict, payload FROM callbacks ORDER BY id`)
	if err != nil {
		r.tb.Fatal(err)
	}
	defer rows.Close()
	var cbs []ledger.StoredCallback
	for rows.Next() {
		var c ledger.StoredCallback
		if err := rows.Scan(&c.InvoiceNo, &c.Verdict, &c.Payload); err != nil {
			r.tb.Fatal(err)
		}
		cbs = append(cbs, c)
	}
	if err := rows.Err(); err != nil {
		r.tb.Fatal(err)
	}
	return cbs
}

// post sends body to /callback and returns the status and the decoded answer.
func (r *cbRig) post(body []byte) (int, map[string]any) {
	r.tb.Helper()
	return r.do(http.MethodPost, callbacks.Path, body)
}

func (r *cbRig) do(method, path string, body []byte) (int, map[string]any) {
	r.tb.Helper()
	req, err := http.NewRequest(method, r.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		r.tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.srv.Client().Do(req)
	if err != nil {
		r.tb.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		r.tb.Fatal(err)
	}
	var answer map[string]any
	if method != http.MethodHead {
		if err := json.Unmarshal(raw, &answer); err != nil {
			r.tb.Fatalf("%s %s: answer %q is not JSON: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode, answer
}

// assertNoSecretLogged fails if the log holds the hash key or any part of token.
func (r *cbRig) assertNoSecretLogged(token string) {
	r.tb.Helper()
	logs := r.logs.String()
	if strings.Contains(logs, cbHashKey) {
		r.tb.Errorf("the hash key is in the log:\n%s", logs)
	}
	for _, part := range strings.Split(token, ".") {
		if len(part) >= 8 && strings.Contains(logs, part) {
			r.tb.Errorf("a part of the token (%.12s…) is in the log:\n%s", part, logs)
		}
	}
}

func cbPayload(invoice, amount, bankRef string) api.CallbackPayload {
	return api.CallbackPayload{
		InvoiceNo: invoice, ErrorDescription: []json.RawMessage{}, InvoiceStatusID: 2, InvoiceStatus: api.StatusSuccess,
		Amount: decimal.RequireFromString(amount), PaymentSwitchChargeRate: decimal.Zero, PayoutServiceID: 1,
		ResponseCode: 2100, BankResponseSuccess: true, OrgnFromAccountCurrency: "MYR", OrgnThirdPartyAccountNo: "1234567890",
		BizMsgID: "BM" + invoice, DisplayName: "Maybank", BankReferenceNo: bankRef, OrgnTransactionAmount: amount, FromAccountNo: "POOL-1",
	}
}

func cbSign(tb testing.TB, p api.CallbackPayload, key string) []byte {
	tb.Helper()
	body, err := api.SignCallback(p, []byte(key))
	if err != nil {
		tb.Fatal(err)
	}
	return body
}

// cbToken returns the JWT of a signed callback body.
func cbToken(tb testing.TB, body []byte) string {
	tb.Helper()
	var w struct {
		Data string `json:"data"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		tb.Fatal(err)
	}
	return w.Data
}

func cbWire(tb testing.TB, token string) []byte {
	tb.Helper()
	body, err := json.Marshal(map[string]any{"data": token, "response_code": 2100})
	if err != nil {
		tb.Fatal(err)
	}
	return body
}

func TestCallbackMovesSubmittedToSucceeded(t *testing.T) {
	t.Parallel()
	r := newCBRig(t)
	r.payout("INV-1", "POI1001", "1500.50", ledger.Submitting, ledger.Submitted)

	status, answer := r.post(cbSign(t, cbPayload("POI1001", "1500.50", "BR1001"), cbHashKey))
	if status != http.StatusOK || answer["status"] != "ok" || answer["message"] != callbacks.VerdictApplied {
		t.Fatalf("answer %d %v, want 200 ok %s", status, answer, callbacks.VerdictApplied)
	}
	p := r.get("INV-1")
	if p.State != ledger.Succeeded || p.BankReferenceNo != "BR1001" || p.TransactionStatus != api.StatusSuccess {
		t.Fatalf("payout after callback: state %s, bank ref %q, status %q", p.State, p.BankReferenceNo, p.TransactionStatus)
	}
	evs := r.events("INV-1")
	last := evs[len(evs)-1]
	if last.From != ledger.Submitted || last.To != ledger.Succeeded || !strings.Contains(last.Detail, "BR1001") {
		t.Fatalf("last event %+v, want SUBMITTED→SUCCEEDED naming the bank reference", last)
	}
	var kept map[string]any
	if err := json.Unmarshal([]byte(last.Payload), &kept); err != nil {
		t.Fatalf("event payload %q is not JSON: %v", last.Payload, err)
	}
	if kept["invoice_no"] != "POI1001" || kept["bank_reference_no"] != "BR1001" || kept["amount"] != "1500.50" {
		t.Fatalf("event payload %v does not carry the callback", kept)
	}
	cbs := r.stored()
	// The payload is in the payout's event, part of the audit trail: the receipt does not copy it.
	if len(cbs) != 1 || cbs[0].Verdict != callbacks.VerdictApplied || cbs[0].InvoiceNo != "POI1001" || cbs[0].Payload != "" {
		t.Fatalf("stored callbacks %+v, want one applied, its payload left to the event", cbs)
	}
}

func TestCallbackReplayIsIdempotent(t *testing.T) {
	t.Parallel()
	r := newCBRig(t)
	r.payout("INV-2", "POI2002", "10.00", ledger.Submitting, ledger.Submitted)
	body := cbSign(t, cbPayload("POI2002", "10.00", "BR2002"), cbHashKey)

	if status, answer := r.post(body); status != http.StatusOK || answer["message"] != callbacks.VerdictApplied {
		t.Fatalf("first delivery: %d %v", status, answer)
	}
	before := r.events("INV-2")
	for range 2 {
		if status, answer := r.post(body); status != http.StatusOK || answer["message"] != callbacks.VerdictReplay {
			t.Fatalf("replay: %d %v, want 200 %s", status, answer, callbacks.VerdictReplay)
		}
	}
	if after := r.events("INV-2"); len(after) != len(before) {
		t.Fatalf("a replay added events: %d before, %d after", len(before), len(after))
	}
	if p := r.get("INV-2"); p.State != ledger.Succeeded || p.BankReferenceNo != "BR2002" {
		t.Fatalf("payout after replays: %s %q", p.State, p.BankReferenceNo)
	}
	// The same body again is counted on the first delivery's row, not stored again.
	if cbs, replays := r.stored(), r.replays(); len(cbs) != 1 || cbs[0].Verdict != callbacks.VerdictApplied || len(replays) != 1 || replays[0] != 2 {
		t.Fatalf("stored %+v with replays %v, want one applied callback counted twice again", cbs, replays)
	}
}

// A valid callback replayed 300 times is stored once and counted: every delivery is answered
// 200 as the first was, and the count is in the audit trail.
func TestCallbackReplayedManyTimesIsStoredOnce(t *testing.T) {
	t.Parallel()
	r := newCBRig(t)
	r.payout("INV-R", "POIR300", "42.00", ledger.Submitting, ledger.Submitted)
	body := cbSign(t, cbPayload("POIR300", "42.00", "BRR300"), cbHashKey)
	const deliveries = 300
	for i := range deliveries {
		if status, answer := r.post(body); status != http.StatusOK || answer["status"] != "ok" {
			t.Fatalf("delivery %d: %d %v, want 200 ok", i+1, status, answer)
		}
	}
	if cbs, replays := r.stored(), r.replays(); len(cbs) != 1 || len(replays) != 1 || replays[0] != deliveries-1 {
		t.Fatalf("%d callbacks stored, replays %v; want one stored, counted %d times again", len(cbs), replays, deliveries-1)
	}
	// A second, differently signed delivery of the same news is another body: stored on its own.
	if status, _ := r.post(cbSign(t, cbPayload("POIR300", "42.00", "BRR300-2"), cbHashKey)); status != http.StatusOK {
		t.Fatalf("another body: %d", status)
	}
	if n := len(r.stored()); n != 2 {
		t.Fatalf("%d callbacks stored after another body, want 2", n)
	}
	rep, err := r.db.VerifyChain(context.Background())
	if err != nil || len(rep.Findings) != 0 {
		t.Fatalf("verify after the replays: %v %v", rep.Findings, err)
	}
	sdb, err := sql.Open("sqlite", r.path)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	if _, err := sdb.Exec(`UPDATE callbacks SET replays = 0`); err != nil {
		t.Fatal(err)
	}
	rep, err = r.db.VerifyChain(context.Background())
	if err != nil || len(rep.Findings) != 1 || !strings.Contains(rep.Findings[0].String(), "callbacks row 000000000001: column replays is 0") {
		t.Fatalf("verify after the count was edited by hand: %v %v, want the column named", rep.Findings, err)
	}
}

// Concurrent deliveries of one callback race to the same row: the ledger refuses all but one
// move, and the losers re-read and answer as replays.
func TestCallbackConcurrentDeliveriesApplyOnce(t *testing.T) {
	t.Parallel()
	r := newCBRig(t)
	r.payout("INV-3", "POI3003", "99.99", ledger.Submitting, ledger.Submitted)
	body := cbSign(t, cbPayload("POI3003", "99.99", "BR3003"), cbHashKey)

	const n = 8
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, err := r.srv.Client().Post(r.srv.URL+callbacks.Path, "application/json", bytes.NewReader(body))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			statuses <- resp.StatusCode
		})
	}
	wg.Wait()
	close(statuses)
	for s := range statuses {
		if s != http.StatusOK {
			t.Errorf("a delivery was answered %d", s)
		}
	}
	moves := 0
	for _, ev := range r.events("INV-3") {
		if ev.To == ledger.Succeeded {
			moves++
		}
	}
	// One body: stored once (with the verdict of whichever delivery stored first), counted n-1 times again.
	if cbs, replays := r.stored(), r.replays(); moves != 1 || len(cbs) != 1 || len(replays) != 1 || replays[0] != n-1 {
		t.Fatalf("%d moves to SUCCEEDED, stored %+v with replays %v; want 1 move, 1 callback counted %d times again", moves, cbs, replays, n-1)
	}
}

func TestCallbackRefusesBadTokens(t *testing.T) {
	t.Parallel()
	good := cbSign(t, cbPayload("POI4004", "250.00", "BR4004"), cbHashKey)
	token := cbToken(t, good)
	parts := strings.Split(token, ".")
	claims, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	forged := bytes.Replace(claims, []byte(`"250.00"`), []byte(`"9250.00"`), 1)
	if bytes.Equal(forged, claims) {
		t.Fatalf("claims %s have no amount to tamper with", claims)
	}
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString(forged) + "." + parts[2]
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + "."
	noneUpper := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"NONE","typ":"JWT"}`)) + "." + parts[1] + "."
	wrongKey := cbToken(t, cbSign(t, cbPayload("POI4004", "250.00", "BR4004"), "another-merchants-key-0123456789"))

	tests := []struct {
		name  string
		token string
	}{
		{"tampered payload", tampered},
		{"unsigned alg none", none},
		{"unsigned alg NONE", noneUpper},
		{"signature stripped", parts[0] + "." + parts[1] + "."},
		{"wrong key", wrongKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newCBRig(t)
			r.payout("INV-4", "POI4004", "250.00", ledger.Submitting, ledger.Submitted)
			before := r.events("INV-4")

			status, answer := r.post(cbWire(t, tt.token))
			if status != http.StatusUnauthorized || answer["status"] != "fail" {
				t.Fatalf("answer %d %v, want 401 fail", status, answer)
			}
			if p := r.get("INV-4"); p.State != ledger.Submitted || p.BankReferenceNo != "" {
				t.Fatalf("ledger changed: %s %q", p.State, p.BankReferenceNo)
			}
			if after := r.events("INV-4"); len(after) != len(before) {
				t.Fatalf("events added: %d before, %d after", len(before), len(after))
			}
			if cbs := r.stored(); len(cbs) != 0 {
				t.Fatalf("a refused callback was stored: %+v", cbs)
			}
			if !strings.Contains(r.logs.String(), "callback refused") {
				t.Fatalf("the refusal is not logged:\n%s", r.logs.String())
			}
			r.assertNoSecretLogged(tt.token)
		})
	}
}

func TestCallbackRefusesMalformedBodies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
	}{
		{"truncated JSON", `{"data": "eyJ`},
		{"not an object", `["a","b"]`},
		{"no data", `{"response_code": 2100}`},
		{"data not a JWT", `{"data": "plain text is never sent", "response_code": 2100}`},
		{"empty body", ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newCBRig(t)
			status, answer := r.post([]byte(tt.body))
			if status != http.StatusBadRequest || answer["status"] != "fail" {
				t.Fatalf("answer %d %v, want 400 fail", status, answer)
			}
			if cbs := r.stored(); len(cbs) != 0 {
				t.Fatalf("a malformed callback was stored: %+v", cbs)
			}
		})
	}
}

func TestCallbackForUnknownInvoiceIsStored(t *testing.T) {
	t.Parallel()
	r := newCBRig(t)
	r.payout("INV-5", "POI5005", "10.00", ledger.Submitting, ledger.Submitted)

	status, answer := r.post(cbSign(t, cbPayload("POI-NOT-OURS", "10.00", "BR9"), cbHashKey))
	if status != http.StatusOK || answer["message"] != callbacks.VerdictUnknownInvoice {
		t.Fatalf("answer %d %v, want 200 %s", status, answer, callbacks.VerdictUnknownInvoice)
	}
	cbs := r.stored()
	if len(cbs) != 1 || cbs[0].Verdict != callbacks.VerdictUnknownInvoice || cbs[0].InvoiceNo != "POI-NOT-OURS" ||
		!strings.Contains(cbs[0].Payload, `"bank_reference_no":"BR9"`) {
		t.Fatalf("stored %+v, want the payload kept as unknown-invoice", cbs)
	}
	if p := r.get("INV-5"); p.State != ledger.Submitted {
		t.Fatalf("an unrelated payout moved to %s", p.State)
	}
	if !strings.Contains(r.logs.String(), "level=WARN") {
		t.Fatalf("no warning logged:\n%s", r.logs.String())
	}
}

// A callback that comes before the run has recorded the answer naming its invoice, for a payout
// that is SUBMITTING or UNKNOWN without an invoice number and pays its account and amount, is
// stored and answered 503; the service's next delivery, once the number is recorded, is applied
// with its name check, and is counted on the stored row.
func TestCallbackBeforeItsInvoiceIsRecordedIsAskedForAgain(t *testing.T) {
	t.Parallel()
	for _, state := range []ledger.State{ledger.Submitting, ledger.Unknown} {
		t.Run(string(state), func(t *testing.T) {
			t.Parallel()
			r := newCBRig(t)
			states := []ledger.State{ledger.Submitting}
			if state == ledger.Unknown {
				states = append(states, ledger.Unknown)
			}
			r.payoutTo("EARLY-1", "Lim Wei Jie", "", "10.00", states...)
			cb := cbPayload("POI-EARLY", "10.00", "BR-EARLY")
			cb.OrgnThirdPartyAccountNo, cb.DisplayName = "001234567890", "TAN AH KOW" // zeros a bank may add
			body := cbSign(t, cb, cbHashKey)

			status, answer := r.post(body)
			if status != http.StatusServiceUnavailable || answer["message"] != "payout not yet recorded, try again" {
				t.Fatalf("answer %d %v, want 503 asking for the callback again", status, answer)
			}
			if cbs := r.stored(); len(cbs) != 1 || cbs[0].Verdict != callbacks.VerdictNotYetRecorded || !strings.Contains(cbs[0].Payload, "BR-EARLY") {
				t.Fatalf("stored %+v, want the payload kept as %s", cbs, callbacks.VerdictNotYetRecorded)
			}
			if p := r.get("EARLY-1"); p.State != state {
				t.Fatalf("the payout moved to %s before its invoice was recorded", p.State)
			}

			// The run records the service's answer (or a lookup finds the payout).
			if err := r.db.Apply(context.Background(), ledger.Change{Ref: "EARLY-1", From: state, To: ledger.Submitted,
				InvoiceNo: "POI-EARLY", Detail: "the service's answer"}); err != nil {
				t.Fatal(err)
			}
			status, answer = r.post(body)
			if status != http.StatusOK || answer["message"] != callbacks.VerdictApplied {
				t.Fatalf("the delivery after the invoice was recorded: %d %v, want 200 %s", status, answer, callbacks.VerdictApplied)
			}
			if p := r.get("EARLY-1"); p.State != ledger.Succeeded {
				t.Fatalf("payout %s, want SUCCEEDED", p.State)
			}
			if nc := r.nameCheck("EARLY-1"); nc.Check != ledger.NameMismatch || nc.DisplayName != "TAN AH KOW" {
				t.Fatalf("name check %+v, want the bank's name flagged as a mismatch", nc)
			}
			if replays := r.replays(); len(replays) != 1 || replays[0] != 1 {
				t.Fatalf("replays %v, want the second delivery counted on the stored row", replays)
			}
		})
	}
}

// The run records the invoice number between the Handler's reads: the callback is either found or
// seen awaiting, and is never answered as an unknown invoice, which the service would not send
// again.
func TestCallbackWhoseInvoiceIsRecordedMeanwhileIsNotLost(t *testing.T) {
	t.Parallel()
	r := newCBRig(t)
	r.payoutTo("RACE-1", "Lim Wei Jie", "", "10.00", ledger.Submitting)
	recordInvoice := func() {
		if err := r.db.Apply(context.Background(), ledger.Change{Ref: "RACE-1", From: ledger.Submitting, To: ledger.Submitted,
			InvoiceNo: "POI-RACE", Detail: "the service's answer"}); err != nil {
			t.Error(err)
		}
	}
	r.store.afterInvoiceRead.Store(&recordInvoice)
	body := cbSign(t, cbPayload("POI-RACE", "10.00", "BR-RACE"), cbHashKey)
	if status, answer := r.post(body); status != http.StatusServiceUnavailable {
		t.Fatalf("answer %d %v, want 503: the payout awaited its invoice when the callback came", status, answer)
	}
	if status, answer := r.post(body); status != http.StatusOK || answer["message"] != callbacks.VerdictApplied {
		t.Fatalf("the next delivery: %d %v, want 200 %s", status, answer, callbacks.VerdictApplied)
	}
	if nc := r.nameCheck("RACE-1"); nc.DisplayName != "Maybank" {
		t.Fatalf("name check %+v, want the bank's name kept", nc)
	}
}

// A payout that has awaited its invoice number for more than a day (its answer lost, no lookup
// since) is left to reconcile: a callback to its account and amount is not asked for again.
func TestCallbackForAPayoutAwaitingOverADayIsNotAskedForAgain(t *testing.T) {
	t.Parallel()
	r := newCBRig(t)
	r.payoutTo("STALE-1", "Lim Wei Jie", "", "10.00", ledger.Submitting, ledger.Unknown)
	r.ahead.Store(int64(25 * time.Hour))
	status, answer := r.post(cbSign(t, cbPayload("POI-STALE", "10.00", "BR-STALE"), cbHashKey))
	if status != http.StatusOK || answer["message"] != callbacks.VerdictUnknownInvoice {
		t.Fatalf("answer %d %v, want 200 %s", status, answer, callbacks.VerdictUnknownInvoice)
	}
}

// An unknown invoice whose amount or account no payout awaiting its invoice pays is not asked for
// again: it is stored, and answered 200.
func TestCallbackForAnotherAccountOrAmountIsNotAskedForAgain(t *testing.T) {
	t.Parallel()
	r := newCBRig(t)
	r.payout("WAITING-1", "", "10.00", ledger.Submitting)
	other := cbPayload("POI-OTHER-AMOUNT", "10.01", "BR1")
	elsewhere := cbPayload("POI-OTHER-ACCOUNT", "10.00", "BR2")
	elsewhere.OrgnThirdPartyAccountNo = "9999999999"
	for _, cb := range []api.CallbackPayload{other, elsewhere} {
		if status, answer := r.post(cbSign(t, cb, cbHashKey)); status != http.StatusOK || answer["message"] != callbacks.VerdictUnknownInvoice {
			t.Errorf("%s: answer %d %v, want 200 %s", cb.InvoiceNo, status, answer, callbacks.VerdictUnknownInvoice)
		}
	}
}

// A callback whose invoice number the ledger holds on two payouts (one written by hand) moves
// neither: the answer asks for it again, and the log names both references.
func TestCallbackForAnInvoiceOnTwoPayoutsMovesNeither(t *testing.T) {
	t.Parallel()
	r := newCBRig(t)
	r.payout("TWICE-1", "POI-TWICE", "10.00", ledger.Submitting, ledger.Submitted)
	r.payout("TWICE-2", "POI-TWICE", "10.00", ledger.Submitting, ledger.Submitted)

	status, answer := r.post(cbSign(t, cbPayload("POI-TWICE", "10.00", "BR1"), cbHashKey))
	if status != http.StatusServiceUnavailable || answer["message"] != "invoice on two payouts: not applied" {
		t.Fatalf("answer %d %v, want 503 refusing the invoice", status, answer)
	}
	for _, ref := range []string{"TWICE-1", "TWICE-2"} {
		if p := r.get(ref); p.State != ledger.Submitted {
			t.Errorf("%s moved to %s, want SUBMITTED", ref, p.State)
		}
	}
	if logs := r.logs.String(); !strings.Contains(logs, "TWICE-1") || !strings.Contains(logs, "TWICE-2") {
		t.Errorf("the log does not name both payouts:\n%s", logs)
	}
}

// Callbacks that are signed but do not prove this payout succeeded are kept, flagged on the
// payout with an event, answered 200 (so the service stops sending them) and not applied.
func TestCallbackFlagsWhatItCannotApply(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		states      []ledger.State
		genuine     bool // a genuine callback is applied first
		payload     func(api.CallbackPayload) api.CallbackPayload
		verdict     string
		wantState   ledger.State
		detailHints []string
	}{
		{
			name:   "amount mismatch",
			states: []ledger.State{ledger.Submitting, ledger.Submitted},
			payload: func(p api.CallbackPayload) api.CallbackPayload {
				p.Amount = decimal.RequireFromString("1000.01")
				return p
			},
			verdict: callbacks.VerdictAmountMismatch, wantState: ledger.Submitted,
			detailHints: []string{"1000.01", "1000.00", "not applied"},
		},
		{
			name:   "status not SUCCESS",
			states: []ledger.State{ledger.Submitting, ledger.Submitted},
			payload: func(p api.CallbackPayload) api.CallbackPayload {
				p.InvoiceStatus, p.InvoiceStatusID = "FAILED", 3
				return p
			},
			verdict: callbacks.VerdictNotSuccess, wantState: ledger.Submitted,
			detailHints: []string{`"FAILED"`, "not applied"},
		},
		{
			name:    "SUCCESS with another status id",
			states:  []ledger.State{ledger.Submitting, ledger.Submitted},
			payload: func(p api.CallbackPayload) api.CallbackPayload { p.InvoiceStatusID = 5; return p },
			verdict: callbacks.VerdictNotSuccess, wantState: ledger.Submitted,
			detailHints: []string{"id 5"},
		},
		{
			name:    "bank says no",
			states:  []ledger.State{ledger.Submitting, ledger.Submitted},
			payload: func(p api.CallbackPayload) api.CallbackPayload { p.BankResponseSuccess = false; return p },
			verdict: callbacks.VerdictNotSuccess, wantState: ledger.Submitted,
			detailHints: []string{"bank_response_success false"},
		},
		{
			name:    "ledger says FAILED",
			states:  []ledger.State{ledger.Submitting, ledger.Submitted, ledger.Failed},
			payload: func(p api.CallbackPayload) api.CallbackPayload { return p },
			verdict: callbacks.VerdictConflict, wantState: ledger.Failed,
			detailHints: []string{"FAILED"},
		},
		{
			name:    "replay with another bank reference",
			states:  []ledger.State{ledger.Submitting, ledger.Submitted},
			genuine: true,
			payload: func(p api.CallbackPayload) api.CallbackPayload { p.BankReferenceNo = "BR-OTHER"; return p },
			verdict: callbacks.VerdictReplayMismatch, wantState: ledger.Succeeded,
			detailHints: []string{"BR-OTHER", "BR6006"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newCBRig(t)
			r.payout("INV-6", "POI6006", "1000.00", tt.states...)
			if tt.genuine {
				if status, _ := r.post(cbSign(t, cbPayload("POI6006", "1000.00", "BR6006"), cbHashKey)); status != http.StatusOK {
					t.Fatalf("genuine callback answered %d", status)
				}
			}
			before := r.get("INV-6")
			nameBefore := r.nameCheck("INV-6")
			// The bank's name in a callback that does not match its payout is no name of it.
			flagged := tt.payload(cbPayload("POI6006", "1000.00", "BR6006"))
			flagged.DisplayName = "SOMEONE ELSE ENTIRELY"
			status, answer := r.post(cbSign(t, flagged, cbHashKey))
			if status != http.StatusOK || answer["message"] != tt.verdict {
				t.Fatalf("answer %d %v, want 200 %s", status, answer, tt.verdict)
			}
			p := r.get("INV-6")
			if p.State != tt.wantState || p.BankReferenceNo != before.BankReferenceNo || p.TransactionStatus != before.TransactionStatus {
				t.Fatalf("payout changed: %+v, was %+v", p, before)
			}
			if name := r.nameCheck("INV-6"); name != nameBefore {
				t.Fatalf("the name at the bank changed to %+v, was %+v", name, nameBefore)
			}
			evs := r.events("INV-6")
			last := evs[len(evs)-1]
			if last.From != tt.wantState || last.To != tt.wantState || last.Payload == "" {
				t.Fatalf("last event %+v, want a %s→%s flag carrying the payload", last, tt.wantState, tt.wantState)
			}
			for _, hint := range tt.detailHints {
				if !strings.Contains(last.Detail, hint) {
					t.Errorf("event detail %q does not mention %q", last.Detail, hint)
				}
			}
			cbs := r.stored()
			if got := cbs[len(cbs)-1]; got.Verdict != tt.verdict {
				t.Fatalf("stored verdict %q, want %q", got.Verdict, tt.verdict)
			}
		})
	}
}

// A payout whose create answer was lost (UNKNOWN) but whose invoice number the ledger learned
// goes UNKNOWN → SUBMITTED → SUCCEEDED in one step.
func TestCallbackResolvesUnknownThroughSubmitted(t *testing.T) {
	t.Parallel()
	r := newCBRig(t)
	r.payout("INV-7", "POI7007", "42.00", ledger.Submitting)
	if err := r.db.Apply(context.Background(), ledger.Change{Ref: "INV-7", From: ledger.Submitting, To: ledger.Unknown, InvoiceNo: "POI7007", Detail: "test setup"}); err != nil {
		t.Fatal(err)
	}
	if status, answer := r.post(cbSign(t, cbPayload("POI7007", "42.00", "BR7007"), cbHashKey)); status != http.StatusOK || answer["message"] != callbacks.VerdictApplied {
		t.Fatalf("answer %d %v", status, answer)
	}
	evs := r.events("INV-7")
	if len(evs) < 2 {
		t.Fatalf("events %+v", evs)
	}
	a, b := evs[len(evs)-2], evs[len(evs)-1]
	if a.From != ledger.Unknown || a.To != ledger.Submitted || b.From != ledger.Submitted || b.To != ledger.Succeeded {
		t.Fatalf("last events %s→%s, %s→%s; want UNKNOWN→SUBMITTED, SUBMITTED→SUCCEEDED", a.From, a.To, b.From, b.To)
	}
	if p := r.get("INV-7"); p.State != ledger.Succeeded || p.BankReferenceNo != "BR7007" {
		t.Fatalf("payout %s %q", p.State, p.BankReferenceNo)
	}
}

func TestCallbackHTTPLimits(t *testing.T) {
	t.Parallel()
	r := newCBRig(t)
	r.payout("INV-8", "POI8008", "5.00", ledger.Submitting, ledger.Submitted)

	huge := append([]byte(`{"data":"`), bytes.Repeat([]byte("a"), callbacks.DefaultMaxBody)...)
	huge = append(huge, `"}`...)
	if status, answer := r.post(huge); status != http.StatusRequestEntityTooLarge || answer["status"] != "fail" {
		t.Errorf("oversize body: %d %v, want 413", status, answer)
	}
	for _, method := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
		if status, _ := r.do(method, callbacks.Path, nil); status != http.StatusMethodNotAllowed {
			t.Errorf("%s /callback: %d, want 405", method, status)
		}
	}
	if status, _ := r.post(nil); status != http.StatusBadRequest {
		t.Errorf("empty POST: %d, want 400", status)
	}
	if status, _ := r.do(http.MethodPost, "/elsewhere", cbSign(t, cbPayload("POI8008", "5.00", "BR8"), cbHashKey)); status != http.StatusNotFound {
		t.Errorf("POST /elsewhere: %d, want 404", status)
	}
	if p := r.get("INV-8"); p.State != ledger.Submitted {
		t.Errorf("payout moved to %s", p.State)
	}
}

func TestCallbackHealth(t *testing.T) {
	t.Parallel()
	r := newCBRig(t)
	if status, answer := r.do(http.MethodGet, callbacks.HealthPath, nil); status != http.StatusOK || answer["message"] != "ok" {
		t.Fatalf("healthz: %d %v", status, answer)
	}
	if status, _ := r.do(http.MethodPost, callbacks.HealthPath, nil); status != http.StatusMethodNotAllowed {
		t.Fatalf("POST healthz: %d, want 405", status)
	}
	if err := r.db.Close(); err != nil {
		t.Fatal(err)
	}
	if status, answer := r.do(http.MethodGet, callbacks.HealthPath, nil); status != http.StatusServiceUnavailable {
		t.Fatalf("healthz with the ledger closed: %d %v, want 503", status, answer)
	}
	// A callback that cannot be recorded is not acknowledged: the service must send it again.
	if status, _ := r.post(cbSign(t, cbPayload("POI9", "5.00", "BR9"), cbHashKey)); status != http.StatusServiceUnavailable {
		t.Fatalf("callback with the ledger closed: %d, want 503", status)
	}
}

func TestNewHandlerRefusesBadConfig(t *testing.T) {
	t.Parallel()
	db, err := ledger.Create(context.Background(), filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tests := []struct {
		name string
		cfg  callbacks.Config
		want error
	}{
		{"no hash key", callbacks.Config{Ledger: db}, api.ErrEmptyHashKey},
		{"blank hash key", callbacks.Config{Ledger: db, HashKey: []byte(" \n")}, api.ErrEmptyHashKey},
		{"no ledger", callbacks.Config{HashKey: []byte(cbHashKey)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := callbacks.NewHandler(tt.cfg)
			if err == nil || h != nil {
				t.Fatalf("NewHandler = %v, %v; want an error", h, err)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
		})
	}
}

// End to end: a payout created through the api client at the sandbox, recorded in the ledger as
// the runner records it; the sandbox settles it and posts its signed callback to the handler,
// which moves the payout to SUCCEEDED.
func TestCallbackFromTheSandbox(t *testing.T) {
	t.Parallel()
	r := newCBRig(t)
	const token = "e2e-auth-token-0123456789"
	sb, client := newCallbackService(t, sandbox.Options{AuthToken: token, HashKey: []byte(cbHashKey), Seed: 5,
		SendCallbacks: true, SettleInterval: -1})
	ctx := context.Background()
	provider := sandbox.DefaultProviders()[0]

	r.payout("E2E-1", "", "321.45", ledger.Submitting)
	res, err := client.CreatePayout(ctx, api.CreatePayoutRequest{
		VirtualPoolReference: "POOL-1", PayoutServiceID: provider.ID, Amount: decimal.RequireFromString("321.45"),
		ClientRedirectURL: "http://127.0.0.1:1/return", ClientCallbackURL: r.srv.URL + callbacks.Path,
		ThirdPartyAccountNo: "1234567890", RecipientReference: "Employee E2E-1", PaymentDescription: "salary", ExternalInvoiceRef: "E2E-1",
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.InvoiceNo == "" {
		t.Fatalf("create answered no invoice number: %s", res.Raw)
	}
	if err := r.db.Apply(ctx, ledger.Change{Ref: "E2E-1", From: ledger.Submitting, To: ledger.Submitted,
		InvoiceNo: res.InvoiceNo, TransactionStatus: res.TransactionStatus, Detail: "accepted"}); err != nil {
		t.Fatal(err)
	}
	if p := r.get("E2E-1"); p.State != ledger.Submitted {
		t.Fatalf("before settling: %s", p.State)
	}

	// No settle loop and no reads: the payout stays PENDING until Settle, which sends the callback.
	sb.Settle()

	// The handler moves the payout, then stores the callback, then answers: wait for the last
	// trace, the sandbox counting a delivered callback.
	deadline := time.Now().Add(10 * time.Second)
	for sb.Stats().Callbacks+sb.Stats().CallbackFailures == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if st := sb.Stats(); st.Callbacks != 1 || st.CallbackFailures != 0 {
		t.Fatalf("sandbox callbacks: %d delivered, %d failed; want 1, 0", st.Callbacks, st.CallbackFailures)
	}
	p := r.get("E2E-1")
	var rec sandbox.Record
	for _, x := range sb.Payouts() {
		if x.ExternalInvoiceRef == "E2E-1" {
			rec = x
		}
	}
	if p.State != ledger.Succeeded || p.BankReferenceNo == "" || p.BankReferenceNo != rec.BankReferenceNo {
		t.Fatalf("payout %s bank ref %q; want SUCCEEDED with the sandbox's %q", p.State, p.BankReferenceNo, rec.BankReferenceNo)
	}
	evs := r.events("E2E-1")
	if last := evs[len(evs)-1]; !strings.Contains(last.Payload, res.InvoiceNo) {
		t.Fatalf("the event does not carry the callback payload: %+v", last)
	}
	if cbs := r.stored(); len(cbs) != 1 || cbs[0].Verdict != callbacks.VerdictApplied {
		t.Fatalf("stored %+v", cbs)
	}
}

// newCallbackService is a sandbox over HTTP that sends signed callbacks, and a client of it.
func newCallbackService(t *testing.T, opts sandbox.Options) (*sandbox.Server, *api.Client) {
	t.Helper()
	sb := sandbox.New(opts)
	svc := httptest.NewServer(sb)
	t.Cleanup(func() {
		svc.Close()
		sb.Close()
	})
	client, err := api.NewClient(api.Config{BaseURL: svc.URL, AuthToken: opts.AuthToken, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return sb, client
}

// rewrapped are the ways a replay of body can be re-sent without the hash key: other spacing,
// another field, the fields reordered, the token padded or in spaces, its signature segment's
// spare bits set. Each is a new body carrying the same signed token.
func rewrapped(tb testing.TB, body []byte) [][]byte {
	tb.Helper()
	token := cbToken(tb, body)
	signed, sig, _ := strings.Cut(token, ".")
	claims, sig, _ := strings.Cut(sig, ".")
	signed += "." + claims
	// An HS256 signature is 32 bytes, 43 characters in base64url: the last one carries two
	// bits that decoding drops.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, sig[len(sig)-1])
	spare := sig[:len(sig)-1] + string(alphabet[last|1])
	var out [][]byte
	for _, f := range []string{`{ "data" : %q , "response_code" : 2100 }`, `{"data":%q,"response_code":2100,"note":"again"}`,
		`{"response_code":"2100","data":%q}`} {
		out = append(out, fmt.Appendf(nil, f, token))
	}
	for _, t := range []string{signed + "." + sig + "=", " " + token + " ", signed + "." + spare} {
		out = append(out, fmt.Appendf(nil, `{"data":%q,"response_code":2100}`, t))
	}
	return out
}

// A replay re-wrapped in a new envelope is the same callback: counted on the first delivery's
// row, not stored again, and no event is added.
func TestCallbackReplayInANewEnvelopeIsAReplay(t *testing.T) {
	t.Parallel()
	r := newCBRig(t)
	r.payout("INV-W", "POIW1", "25.00", ledger.Submitting, ledger.Submitted)
	body := cbSign(t, cbPayload("POIW1", "25.00", "BRW1"), cbHashKey)
	if status, answer := r.post(body); status != http.StatusOK || answer["message"] != callbacks.VerdictApplied {
		t.Fatalf("first delivery: %d %v", status, answer)
	}
	before := r.events("INV-W")
	again := rewrapped(t, body)
	for i, b := range again {
		if status, answer := r.post(b); status != http.StatusOK || answer["message"] != callbacks.VerdictReplay {
			t.Errorf("re-wrapped replay %d %s: %d %v, want 200 %s", i, b, status, answer, callbacks.VerdictReplay)
		}
	}
	if cbs, replays := r.stored(), r.replays(); len(cbs) != 1 || len(replays) != 1 || replays[0] != len(again) {
		t.Errorf("stored %+v with replays %v, want one callback counted %d times again", cbs, replays, len(again))
	}
	if after := r.events("INV-W"); len(after) != len(before) {
		t.Errorf("replays added events: %d before, %d after", len(before), len(after))
	}
}
