package sandbox_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/shopspring/decimal"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/internal/fakeclock"
)

const (
	token   = "sandbox-test-token"
	hashKey = "sandbox-test-hash-key"
)

type rig struct {
	tb  testing.TB
	sb  *sandbox.Server
	ts  *httptest.Server
	clk *fakeclock.Clock
}

// newRig starts a sandbox on loopback with a hand-moved clock and no settle loop.
func newRig(tb testing.TB, opts sandbox.Options) *rig {
	tb.Helper()
	if opts.AuthToken == "" {
		opts.AuthToken = token
	}
	if opts.HashKey == nil {
		opts.HashKey = []byte(hashKey)
	}
	clk := fakeclock.New(time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC))
	if opts.Now == nil {
		opts.Now = clk.Now
	}
	if opts.SettleInterval == 0 {
		opts.SettleInterval = -1
	}
	sb := sandbox.New(opts)
	ts := httptest.NewServer(sb)
	tb.Cleanup(func() {
		ts.Close()
		sb.Close()
	})
	return &rig{tb: tb, sb: sb, ts: ts, clk: clk}
}

type envelope struct {
	Status  string          `json:"status"`
	Code    int             `json:"code"`
	Data    json.RawMessage `json:"data"`
	UUID    *string         `json:"uuid"`
	Message *string         `json:"message"`
	Error   *string         `json:"error"`
}

type response struct {
	status int
	header http.Header
	env    envelope
	body   string
}

// do sends a request with the auth-token (unless tok is "-") and decodes the envelope.
func (r *rig) do(method, path, tok, contentType, body string) (response, error) {
	r.tb.Helper()
	req, err := http.NewRequest(method, r.ts.URL+path, strings.NewReader(body))
	if err != nil {
		r.tb.Fatal(err)
	}
	if tok != "-" {
		req.Header.Set("auth-token", tok)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := r.ts.Client().Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, err
	}
	out := response{status: resp.StatusCode, header: resp.Header, body: string(b)}
	if err := json.Unmarshal(b, &out.env); err != nil {
		r.tb.Fatalf("%s %s: body is not an envelope: %v: %q", method, path, err, b)
	}
	if out.env.UUID == nil || *out.env.UUID == "" {
		r.tb.Errorf("%s %s: no uuid in %s", method, path, b)
	}
	return out, nil
}

func (r *rig) mustDo(method, path, tok, contentType, body string) response {
	r.tb.Helper()
	resp, err := r.do(method, path, tok, contentType, body)
	if err != nil {
		r.tb.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

func (r *rig) create(body string) (response, error) {
	r.tb.Helper()
	return r.do(http.MethodPost, sandbox.PathPayout, token, "application/json", body)
}

func (r *rig) mustCreate(body string) response {
	r.tb.Helper()
	resp, err := r.create(body)
	if err != nil {
		r.tb.Fatalf("create: %v", err)
	}
	return resp
}

func (r *rig) get(ref string) response {
	r.tb.Helper()
	return r.mustDo(http.MethodGet, sandbox.PathPayout+"/"+url.PathEscape(ref), token, "", "")
}

// body returns a valid create body with fields replaced or (value nil) removed.
func body(tb testing.TB, ref string, change map[string]any) string {
	tb.Helper()
	m := map[string]any{
		"virtual_pool_reference": "POOL-1",
		"payout_service_id":      1,
		"amount":                 json.Number("12.50"),
		"client_redirect_url":    "https://merchant.example/return",
		"client_callback_url":    "https://merchant.example/callback",
		"third_party_account_no": "0123456789",
		"recipient_reference":    "Employee 1",
		"payment_description":    "Salary November",
		"external_invoice_ref":   ref,
	}
	for k, v := range change {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

type wirePayout struct {
	Value               json.Number `json:"value"`
	ExternalInvoiceRef  string      `json:"external_invoice_ref"`
	PayoutInvoiceNo     string      `json:"payout_invoice_no"`
	PayoutAccountNumber string      `json:"payout_account_number"`
	CreatedAt           string      `json:"created_at"`
	TransactionStatus   string      `json:"transaction_status"`
}

func payoutOf(tb testing.TB, resp response) wirePayout {
	tb.Helper()
	var p wirePayout
	if err := json.Unmarshal(resp.env.Data, &p); err != nil {
		tb.Fatalf("data is not a payout: %v: %s", err, resp.body)
	}
	return p
}

func TestListProviders(t *testing.T) {
	t.Parallel()
	r := newRig(t, sandbox.Options{})
	resp := r.mustDo(http.MethodPost, sandbox.PathProviders, token, "", "")
	if resp.status != 200 || resp.env.Status != "ok" || resp.env.Code != 200 {
		t.Fatalf("got HTTP %d %s", resp.status, resp.body)
	}
	var data struct {
		List struct {
			Draw           int            `json:"draw"`
			RecordFiltered int            `json:"record_filtered"`
			RecordTotal    int            `json:"record_total"`
			Data           []api.Provider `json:"data"`
		} `json:"list"`
	}
	if err := json.Unmarshal(resp.env.Data, &data); err != nil {
		t.Fatal(err)
	}
	want := sandbox.DefaultProviders()
	if len(data.List.Data) != len(want) || data.List.RecordTotal != len(want) || data.List.RecordFiltered != len(want) || data.List.Draw != 1 {
		t.Fatalf("list %+v", data.List)
	}
	seen := map[int64]bool{}
	for i, p := range data.List.Data {
		if p != want[i] || p.Name == "" || seen[p.ID] {
			t.Errorf("provider %d: %+v", i, p)
		}
		seen[p.ID] = true
	}
	if want[0].ID != 1 || !strings.HasPrefix(want[0].Name, "Maybank") {
		t.Errorf("Maybank's id is not stable: %+v", want[0])
	}
	if resp := r.mustDo(http.MethodGet, sandbox.PathProviders, token, "", ""); resp.status != http.StatusMethodNotAllowed {
		t.Errorf("GET providers: HTTP %d", resp.status)
	}
}

func TestAuthRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, method, path, tok string
	}{
		{"missing on providers", http.MethodPost, sandbox.PathProviders, "-"},
		{"wrong on providers", http.MethodPost, sandbox.PathProviders, "wrong-token"},
		{"empty on get", http.MethodGet, sandbox.PathPayout + "/X", ""},
		{"prefix of the token on create", http.MethodPost, sandbox.PathPayout, token[:5]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, sandbox.Options{})
			resp := r.mustDo(tt.method, tt.path, tt.tok, "application/json", body(t, "R1", nil))
			if resp.status != 401 || resp.env.Status != "fail" || resp.env.Code != 401 || string(resp.env.Data) != "null" {
				t.Fatalf("got HTTP %d %s", resp.status, resp.body)
			}
			if resp.env.Message == nil || *resp.env.Message != "invalid auth-token" {
				t.Errorf("message %v", resp.env.Message)
			}
			if strings.Contains(resp.body, token) || (tt.tok != "" && tt.tok != "-" && strings.Contains(resp.body, tt.tok)) {
				t.Errorf("token echoed: %s", resp.body)
			}
			if n := r.sb.Stats().Creates; n != 0 {
				t.Errorf("%d payouts created", n)
			}
		})
	}
	t.Run("empty configured token refuses everything", func(t *testing.T) {
		sb := sandbox.New(sandbox.Options{SettleInterval: -1})
		defer sb.Close()
		rec := httptest.NewRecorder()
		sb.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, sandbox.PathProviders, nil))
		if rec.Code != 401 {
			t.Errorf("HTTP %d", rec.Code)
		}
	})
}

func TestCreateAndGet(t *testing.T) {
	t.Parallel()
	r := newRig(t, sandbox.Options{SettleAfter: time.Minute})
	resp := r.mustCreate(body(t, "INV/2026 #1", nil))
	if resp.status != 200 || resp.env.Status != "ok" || resp.env.Code != 200 {
		t.Fatalf("create: HTTP %d %s", resp.status, resp.body)
	}
	created := payoutOf(t, resp)
	if created.PayoutInvoiceNo == "" || created.ExternalInvoiceRef != "INV/2026 #1" || created.TransactionStatus != api.StatusPending ||
		created.Value.String() != "12.50" || created.PayoutAccountNumber != "0123456789" || created.CreatedAt != "2026-11-22T08:00:00Z" {
		t.Fatalf("created %+v", created)
	}
	for _, ref := range []string{created.PayoutInvoiceNo, "INV/2026 #1"} {
		got := r.get(ref)
		if got.status != 200 || got.env.Status != "ok" || got.env.Code != 2000 {
			t.Fatalf("get %q: HTTP %d %s", ref, got.status, got.body)
		}
		if p := payoutOf(t, got); p != created {
			t.Errorf("get %q: %+v, want %+v", ref, p, created)
		}
	}
	if !strings.Contains(r.get(created.PayoutInvoiceNo).body, `"value":12.50`) {
		t.Errorf("value is not a JSON number with two decimals")
	}
	recs := r.sb.Payouts()
	if len(recs) != 1 || recs[0].InvoiceNo != created.PayoutInvoiceNo || !recs[0].Amount.Equal(decimal.RequireFromString("12.5")) ||
		recs[0].Account != "0123456789" || recs[0].ProviderID != 1 || recs[0].Status != api.StatusPending {
		t.Errorf("records %+v", recs)
	}
}

func TestGetUnknown(t *testing.T) {
	t.Parallel()
	r := newRig(t, sandbox.Options{})
	for _, ref := range []string{"NOPE", "a%2Fb"} {
		resp := r.mustDo(http.MethodGet, sandbox.PathPayout+"/"+ref, token, "", "")
		if resp.status != 404 || resp.env.Status != "fail" || resp.env.Code != 404 || *resp.env.Message != "payout not found" || string(resp.env.Data) != "null" {
			t.Errorf("%s: HTTP %d %s", ref, resp.status, resp.body)
		}
	}
	if resp := r.mustDo(http.MethodPost, "/api/v1/merchant/nothing", token, "", ""); resp.status != 404 {
		t.Errorf("unknown path: HTTP %d", resp.status)
	}
}

func TestCreateOmitInvoice(t *testing.T) {
	t.Parallel()
	r := newRig(t, sandbox.Options{OmitInvoiceInCreate: true})
	resp := r.mustCreate(body(t, "R1", nil))
	if resp.status != 200 || resp.env.Status != "ok" || string(resp.env.Data) != "null" {
		t.Fatalf("HTTP %d %s", resp.status, resp.body)
	}
	if p := payoutOf(t, r.get("R1")); p.PayoutInvoiceNo == "" {
		t.Errorf("payout not found by ref: %+v", p)
	}
}

func TestCreateValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		contentType string
		body        string
		status      int
		want        string // in the error field
	}{
		{"wrong content type", "text/plain", body(t, "R", nil), 415, "Content-Type"},
		{"no content type", "", body(t, "R", nil), 415, "Content-Type"},
		{"not JSON", "application/json", "amount=1", 400, "not a JSON object"},
		{"JSON array", "application/json", "[]", 400, "not a JSON object"},
		{"trailing data", "application/json", body(t, "R", nil) + "{}", 400, "data after"},
		{"missing ref", "application/json", body(t, "", map[string]any{"external_invoice_ref": nil}), 400, "external_invoice_ref: required"},
		{"blank ref", "application/json", body(t, "  ", nil), 400, "external_invoice_ref: required"},
		{"missing pool", "application/json", body(t, "R", map[string]any{"virtual_pool_reference": nil}), 400, "virtual_pool_reference: required"},
		{"missing recipient", "application/json", body(t, "R", map[string]any{"recipient_reference": ""}), 400, "recipient_reference: required"},
		{"missing callback url", "application/json", body(t, "R", map[string]any{"client_callback_url": nil}), 400, "client_callback_url: required"},
		{"relative callback url", "application/json", body(t, "R", map[string]any{"client_callback_url": "/cb"}), 400, "client_callback_url: must be an absolute"},
		{"ftp redirect url", "application/json", body(t, "R", map[string]any{"client_redirect_url": "ftp://x/y"}), 400, "client_redirect_url: must be an absolute"},
		{"ref as number", "application/json", body(t, "R", map[string]any{"external_invoice_ref": 12}), 400, "external_invoice_ref: must be a string"},
		{"ref too long", "application/json", body(t, strings.Repeat("x", sandbox.MaxRefLen+1), nil), 400, "longer than"},
		{"unknown field", "application/json", body(t, "R", map[string]any{"currency": "MYR"}), 400, "currency: unknown field"},
		{"missing service id", "application/json", body(t, "R", map[string]any{"payout_service_id": nil}), 400, "payout_service_id: required"},
		{"unknown service id", "application/json", body(t, "R", map[string]any{"payout_service_id": 999}), 400, "payout_service_id: unknown"},
		{"service id as string", "application/json", body(t, "R", map[string]any{"payout_service_id": "1"}), 400, "payout_service_id: must be a JSON integer"},
		{"fractional service id", "application/json", body(t, "R", map[string]any{"payout_service_id": json.Number("1.5")}), 400, "payout_service_id: must be a JSON integer"},
		{"missing amount", "application/json", body(t, "R", map[string]any{"amount": nil}), 400, "amount: required"},
		{"amount as string", "application/json", body(t, "R", map[string]any{"amount": "12.50"}), 400, "amount: must be a JSON number"},
		{"zero amount", "application/json", body(t, "R", map[string]any{"amount": 0}), 400, "amount: must be greater than 0"},
		{"negative amount", "application/json", body(t, "R", map[string]any{"amount": json.Number("-1.00")}), 400, "amount: must be greater than 0"},
		{"three decimals", "application/json", body(t, "R", map[string]any{"amount": json.Number("1.005")}), 400, "amount: more than 2 decimals"},
		{"above the maximum", "application/json", body(t, "R", map[string]any{"amount": json.Number("1000000.01")}), 400, "amount: greater than 1000000.00"},
		{"account with letters", "application/json", body(t, "R", map[string]any{"third_party_account_no": "12AB5678"}), 400, "third_party_account_no: must be digits"},
		{"account with dashes", "application/json", body(t, "R", map[string]any{"third_party_account_no": "1234-5678"}), 400, "third_party_account_no: must be digits"},
		{"account too short", "application/json", body(t, "R", map[string]any{"third_party_account_no": "123"}), 400, "third_party_account_no: shorter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, sandbox.Options{})
			resp := r.mustDo(http.MethodPost, sandbox.PathPayout, token, tt.contentType, tt.body)
			if resp.status != tt.status || resp.env.Status != "fail" || resp.env.Code != sandbox.CodeValidation || string(resp.env.Data) != "null" {
				t.Fatalf("HTTP %d %s", resp.status, resp.body)
			}
			if resp.env.Error == nil || !strings.Contains(*resp.env.Error, tt.want) {
				t.Errorf("error %v, want it to contain %q", resp.env.Error, tt.want)
			}
			if st := r.sb.Stats(); st.Creates != 0 || st.Rejected != 1 || len(r.sb.Payouts()) != 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestCreateAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change map[string]any
		amount string
	}{
		{"optional fields absent", map[string]any{"payment_description": nil, "client_redirect_url": nil}, "12.5"},
		{"optional fields empty", map[string]any{"payment_description": "", "client_redirect_url": ""}, "12.5"},
		{"integer amount", map[string]any{"amount": 100}, "100"},
		{"trailing zeros", map[string]any{"amount": json.Number("7.500")}, "7.5"},
		{"maximum amount", map[string]any{"amount": json.Number("1000000.00")}, "1000000"},
		{"leading zero account", map[string]any{"third_party_account_no": "000123"}, "12.5"},
		{"e-wallet", map[string]any{"payout_service_id": 51, "third_party_account_no": "60123456789"}, "12.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, sandbox.Options{})
			resp := r.mustDo(http.MethodPost, sandbox.PathPayout, token, "application/json; charset=utf-8", body(t, "R", tt.change))
			if resp.status != 200 {
				t.Fatalf("HTTP %d %s", resp.status, resp.body)
			}
			if recs := r.sb.Payouts(); len(recs) != 1 || !recs[0].Amount.Equal(decimal.RequireFromString(tt.amount)) {
				t.Errorf("records %+v", recs)
			}
		})
	}
}

func TestDuplicatePolicy(t *testing.T) {
	t.Parallel()
	t.Run("allow pays again", func(t *testing.T) {
		r := newRig(t, sandbox.Options{})
		first := payoutOf(t, r.mustCreate(body(t, "DUP", nil)))
		second := payoutOf(t, r.mustCreate(body(t, "DUP", nil)))
		if first.PayoutInvoiceNo == second.PayoutInvoiceNo {
			t.Fatalf("same invoice %s", first.PayoutInvoiceNo)
		}
		if got := payoutOf(t, r.get("DUP")); got.PayoutInvoiceNo != first.PayoutInvoiceNo {
			t.Errorf("get by ref: %s, want the first %s", got.PayoutInvoiceNo, first.PayoutInvoiceNo)
		}
		if c := r.sb.CreateCounts(); c["DUP"] != 2 {
			t.Errorf("counts %v", c)
		}
		if d := r.sb.Duplicates(); len(d) != 1 || d[0] != "DUP" {
			t.Errorf("duplicates %v", d)
		}
	})
	t.Run("reject refuses", func(t *testing.T) {
		r := newRig(t, sandbox.Options{DuplicatePolicy: sandbox.RejectDuplicates})
		r.mustCreate(body(t, "DUP", nil))
		resp := r.mustCreate(body(t, "DUP", nil))
		if resp.status != 409 || resp.env.Status != "fail" || *resp.env.Message != "duplicate external_invoice_ref" || string(resp.env.Data) != "null" {
			t.Fatalf("HTTP %d %s", resp.status, resp.body)
		}
		if c := r.sb.CreateCounts(); c["DUP"] != 1 || len(r.sb.Duplicates()) != 0 {
			t.Errorf("counts %v", c)
		}
	})
}

func TestSettle(t *testing.T) {
	t.Parallel()
	r := newRig(t, sandbox.Options{SettleAfter: 10 * time.Second, FailSuffixes: sandbox.DefaultFailSuffixes})
	r.mustCreate(body(t, "OK", nil))
	r.mustCreate(body(t, "KO", map[string]any{"third_party_account_no": "123456000"}))
	r.clk.Advance(9 * time.Second)
	r.sb.Settle()
	for _, ref := range []string{"OK", "KO"} {
		if s := payoutOf(t, r.get(ref)).TransactionStatus; s != api.StatusPending {
			t.Errorf("%s before SettleAfter: %s", ref, s)
		}
	}
	r.clk.Advance(time.Second)
	// Settled lazily by the read, without Settle.
	if s := payoutOf(t, r.get("OK")).TransactionStatus; s != api.StatusSuccess {
		t.Errorf("OK: %s", s)
	}
	if s := payoutOf(t, r.get("KO")).TransactionStatus; s != api.StatusFailed {
		t.Errorf("KO: %s", s)
	}
}

// TestSettleByDueTimeNotCreationOrder: a payout created later but stamped earlier (a clock set
// back) settles first, and the one made before it waits for its own time.
func TestSettleByDueTimeNotCreationOrder(t *testing.T) {
	t.Parallel()
	r := newRig(t, sandbox.Options{SettleAfter: time.Hour})
	r.clk.Advance(30 * time.Minute)
	r.mustCreate(body(t, "MADE-FIRST", nil))
	r.clk.Advance(-30 * time.Minute)
	r.mustCreate(body(t, "MADE-SECOND", nil))
	r.clk.Advance(time.Hour)
	if s := payoutOf(t, r.get("MADE-SECOND")).TransactionStatus; s != api.StatusSuccess {
		t.Errorf("MADE-SECOND an hour after it was stamped: %s", s)
	}
	if s := payoutOf(t, r.get("MADE-FIRST")).TransactionStatus; s != api.StatusPending {
		t.Errorf("MADE-FIRST half an hour before its time: %s", s)
	}
	r.clk.Advance(30 * time.Minute)
	if s := payoutOf(t, r.get("MADE-FIRST")).TransactionStatus; s != api.StatusSuccess {
		t.Errorf("MADE-FIRST at its time: %s", s)
	}
}

func TestSettleRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    sandbox.Options
		account string
		want    string
	}{
		{"default: all succeed", sandbox.Options{}, "100000", api.StatusSuccess},
		{"suffix fails", sandbox.Options{FailSuffixes: []string{"999", "000"}}, "100000", api.StatusFailed},
		{"suffix not matched", sandbox.Options{FailSuffixes: []string{"000"}}, "100001", api.StatusSuccess},
		{"func wins over suffix", sandbox.Options{FailSuffixes: []string{"000"},
			FailAccounts: func(a string) bool { return strings.HasPrefix(a, "9") }}, "900001", api.StatusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, tt.opts)
			r.mustCreate(body(t, "R", map[string]any{"third_party_account_no": tt.account}))
			r.sb.Settle()
			if recs := r.sb.Payouts(); recs[0].Status != tt.want {
				t.Errorf("status %s, want %s", recs[0].Status, tt.want)
			}
		})
	}
}

func TestSettleLoop(t *testing.T) {
	t.Parallel()
	got := make(chan struct{}, 1)
	recv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { got <- struct{}{} }))
	defer recv.Close()
	// No read ever settles this payout: only the background loop can, and then it calls back.
	r := newRig(t, sandbox.Options{Now: time.Now, SettleInterval: time.Millisecond, SendCallbacks: true})
	r.mustCreate(body(t, "R", map[string]any{"client_callback_url": recv.URL}))
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the settle loop never settled the payout")
	}
}

// rawPayouts reads /_sandbox/payouts, which settles, so it is used only when that is fine.
func rawPayouts(tb testing.TB, r *rig) []sandbox.Record {
	tb.Helper()
	resp, err := r.ts.Client().Get(r.ts.URL + sandbox.PathInspectPayout)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var recs []sandbox.Record
	if err := json.NewDecoder(resp.Body).Decode(&recs); err != nil {
		tb.Fatal(err)
	}
	return recs
}

func TestCallback(t *testing.T) {
	t.Parallel()
	type delivery struct {
		body        []byte
		contentType string
	}
	got := make(chan delivery, 4)
	var calls int
	var mu sync.Mutex
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		calls++
		first := calls == 1
		mu.Unlock()
		if first { // the sandbox retries
			http.Error(w, "try again", http.StatusInternalServerError)
			return
		}
		got <- delivery{b, r.Header.Get("Content-Type")}
	}))
	defer recv.Close()

	r := newRig(t, sandbox.Options{SendCallbacks: true, FailSuffixes: []string{"000"}})
	r.mustCreate(body(t, "CB-1", map[string]any{"client_callback_url": recv.URL + "/cb", "amount": json.Number("1234.5")}))
	r.mustCreate(body(t, "CB-FAIL", map[string]any{"client_callback_url": recv.URL + "/cb", "third_party_account_no": "555000"}))
	r.sb.Settle()
	var d delivery
	select {
	case d = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("no callback delivered")
	}
	if d.contentType != "application/json" {
		t.Errorf("content type %q", d.contentType)
	}
	var wire struct {
		Data         string `json:"data"`
		ResponseCode int    `json:"response_code"`
	}
	if err := json.Unmarshal(d.body, &wire); err != nil || wire.ResponseCode != 2100 {
		t.Fatalf("wire form %s: %v", d.body, err)
	}
	claims := jwt.MapClaims{}
	tok, err := jwt.ParseWithClaims(wire.Data, claims, func(*jwt.Token) (any, error) { return []byte(hashKey), nil },
		jwt.WithValidMethods([]string{"HS256"}))
	if err != nil || !tok.Valid {
		t.Fatalf("JWT does not verify with the hash key: %v", err)
	}
	if _, err := jwt.Parse(wire.Data, func(*jwt.Token) (any, error) { return []byte("another key"), nil }); !errors.Is(err, jwt.ErrSignatureInvalid) {
		t.Errorf("JWT verifies with another key: %v", err)
	}
	rec := r.sb.Payouts()[0]
	want := map[string]any{
		"invoice_no": rec.InvoiceNo, "invoice_status_id": float64(2), "invoice_status": "SUCCESS",
		"amount": "1234.50", "orgn_third_party_account_no": "0123456789", "bank_reference_no": rec.BankReferenceNo,
		"payout_service_id": float64(1), "bank_response_success": true, "orgn_from_account_currency": "MYR",
	}
	for k, v := range want {
		if claims[k] != v {
			t.Errorf("claim %s = %#v, want %#v", k, claims[k], v)
		}
	}
	if rec.BankReferenceNo == "" {
		t.Error("no bank reference")
	}
	cb, err := api.VerifyCallback(d.body, []byte(hashKey))
	if err != nil || cb.Payload.InvoiceNo != rec.InvoiceNo {
		t.Errorf("api.VerifyCallback: %+v, %v", cb.Payload, err)
	}
	waitFor(t, func() bool { st := r.sb.Stats(); return st.Callbacks+st.CallbackFailures > 0 })
	r.sb.Close() // waits for delivery goroutines: the FAILED payout sent nothing
	if st := r.sb.Stats(); st.Callbacks != 1 || st.CallbackFailures != 0 || len(got) != 0 {
		t.Errorf("stats %+v, %d more deliveries", st, len(got))
	}
}

// waitFor polls cond until it holds; the deadline only guards against a hang.
func waitFor(tb testing.TB, cond func() bool) {
	tb.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatal("condition never held")
		}
	}
}

func TestNoCallbackUnlessAsked(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	calls := 0
	recv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		mu.Lock()
		calls++
		mu.Unlock()
	}))
	defer recv.Close()
	r := newRig(t, sandbox.Options{})
	r.mustCreate(body(t, "R", map[string]any{"client_callback_url": recv.URL}))
	r.sb.Settle()
	r.sb.Close()
	mu.Lock()
	defer mu.Unlock()
	if calls != 0 {
		t.Errorf("%d callbacks without SendCallbacks", calls)
	}
}

// lostPattern creates n payouts one by one and returns which had their response lost.
func lostPattern(t *testing.T, seed int64, n int) string {
	t.Helper()
	r := newRig(t, sandbox.Options{Seed: seed, Faults: sandbox.Faults{LostResponseRate: 0.3}})
	var pattern []byte
	for i := range n {
		resp, err := r.create(body(t, fmt.Sprintf("L-%d", i), nil))
		switch {
		case err != nil:
			pattern = append(pattern, 'x')
		case resp.status == 200:
			pattern = append(pattern, '.')
		default:
			t.Fatalf("create %d: HTTP %d %s", i, resp.status, resp.body)
		}
	}
	st := r.sb.Stats()
	lost := bytes.Count(pattern, []byte("x"))
	if st.Creates != n || st.Lost != lost || len(r.sb.CreateCounts()) != n || len(r.sb.Payouts()) != n {
		t.Errorf("seed %d: stats %+v, %d lost by the client", seed, st, lost)
	}
	for _, rec := range r.sb.Payouts() {
		var i int
		if _, err := fmt.Sscanf(rec.ExternalInvoiceRef, "L-%d", &i); err != nil {
			t.Fatal(err)
		}
		if want := pattern[i] == 'x'; rec.ResponseLost != want {
			t.Errorf("%s: ResponseLost %v", rec.ExternalInvoiceRef, rec.ResponseLost)
		}
	}
	return string(pattern)
}

func TestLostResponses(t *testing.T) {
	t.Parallel()
	a, b, c := lostPattern(t, 1, 30), lostPattern(t, 1, 30), lostPattern(t, 2, 30)
	if a != b {
		t.Errorf("same seed, different patterns:\n%s\n%s", a, b)
	}
	if a == c {
		t.Errorf("different seeds, same pattern %s", a)
	}
	if !strings.Contains(a, "x") || !strings.Contains(a, ".") {
		t.Errorf("pattern %s has not both outcomes", a)
	}
}

func TestErrorRateCreatesNothing(t *testing.T) {
	t.Parallel()
	r := newRig(t, sandbox.Options{Seed: 3, Faults: sandbox.Faults{ErrorRate: 0.5}})
	var fails int
	for i := range 40 {
		resp := r.mustCreate(body(t, fmt.Sprintf("E-%d", i), nil))
		switch resp.status {
		case 200:
		case 503:
			fails++
			if resp.env.Status != "fail" || string(resp.env.Data) != "null" {
				t.Errorf("503 envelope %s", resp.body)
			}
			if n := r.sb.CreateCounts()[fmt.Sprintf("E-%d", i)]; n != 0 {
				t.Errorf("E-%d: created on a 503", i)
			}
		default:
			t.Fatalf("HTTP %d %s", resp.status, resp.body)
		}
	}
	st := r.sb.Stats()
	if fails == 0 || fails == 40 || st.ServerErrors != fails || st.Creates != 40-fails {
		t.Errorf("%d 503s, stats %+v", fails, st)
	}
}

func TestSetFaultsAndDown(t *testing.T) {
	t.Parallel()
	r := newRig(t, sandbox.Options{})
	r.sb.SetDown(true)
	if resp := r.mustCreate(body(t, "D", nil)); resp.status != 503 {
		t.Errorf("down: HTTP %d", resp.status)
	}
	r.sb.SetDown(false)
	r.sb.SetFaults(sandbox.Faults{ErrorRate: 1})
	if resp := r.mustDo(http.MethodPost, sandbox.PathProviders, token, "", ""); resp.status != 503 {
		t.Errorf("error rate 1: HTTP %d", resp.status)
	}
	r.sb.SetFaults(sandbox.Faults{LostResponseRate: 1})
	if _, err := r.create(body(t, "LOST", nil)); err == nil {
		t.Error("lost rate 1: a response arrived")
	}
	r.sb.SetFaults(sandbox.Faults{})
	if resp := r.mustCreate(body(t, "UP", nil)); resp.status != 200 {
		t.Errorf("back up: HTTP %d", resp.status)
	}
	if c := r.sb.CreateCounts(); c["D"] != 0 || c["LOST"] != 1 || c["UP"] != 1 {
		t.Errorf("counts %v", c)
	}
}

func TestLatency(t *testing.T) {
	t.Parallel()
	r := newRig(t, sandbox.Options{Faults: sandbox.Faults{Latency: 20 * time.Millisecond}})
	start := time.Now()
	r.mustDo(http.MethodPost, sandbox.PathProviders, token, "", "")
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Errorf("answered in %v", d)
	}
}

// TestLatencyWaitsOnTheGivenTimers: with Options.After, the latency passes on the clock that
// gives the timers, here one whose timers end at once, moving it on by the latency.
func TestLatencyWaitsOnTheGivenTimers(t *testing.T) {
	t.Parallel()
	clk := fakeclock.NewJumping(time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC))
	start := clk.Now()
	r := newRig(t, sandbox.Options{Now: clk.Now, After: func(d time.Duration) <-chan time.Time { return clk.NewTimer(d).C() },
		Faults: sandbox.Faults{Latency: 20 * time.Millisecond}})
	r.mustDo(http.MethodPost, sandbox.PathProviders, token, "", "")
	if d := clk.Now().Sub(start); d != 20*time.Millisecond {
		t.Errorf("the clock moved %v while the request was answered, want the latency, 20ms", d)
	}
}

// TestMaxInFlight: requests served one after the other count one at a time; requests sent
// together while each is held by the latency count together.
func TestMaxInFlight(t *testing.T) {
	t.Parallel()
	r := newRig(t, sandbox.Options{})
	for range 3 {
		r.mustDo(http.MethodPost, sandbox.PathProviders, token, "", "")
	}
	if got := r.sb.Stats().MaxInFlight; got != 1 {
		t.Fatalf("sequential requests: max in flight %d, want 1", got)
	}
	r.sb.SetFaults(sandbox.Faults{Latency: 500 * time.Millisecond})
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := r.do(http.MethodPost, sandbox.PathProviders, token, "", ""); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := r.sb.Stats().MaxInFlight; got != 3 {
		t.Errorf("3 requests held together: max in flight %d, want 3", got)
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	r := newRig(t, sandbox.Options{Faults: sandbox.Faults{RateLimit: 5}})
	var statuses []int
	for range 8 {
		resp := r.mustDo(http.MethodPost, sandbox.PathProviders, token, "", "")
		statuses = append(statuses, resp.status)
		if resp.status == 429 && (resp.header.Get("Retry-After") != "1" || resp.env.Code != 429 || resp.env.Status != "fail") {
			t.Errorf("429 without Retry-After or envelope: %v %s", resp.header, resp.body)
		}
	}
	if fmt.Sprint(statuses) != "[200 200 200 200 200 429 429 429]" {
		t.Errorf("statuses %v", statuses)
	}
	r.clk.Advance(time.Second) // the next window
	if resp := r.mustDo(http.MethodPost, sandbox.PathProviders, token, "", ""); resp.status != 200 {
		t.Errorf("next second: HTTP %d", resp.status)
	}
	// A 429 on create creates nothing.
	r.clk.Advance(time.Second)
	for i := range 7 {
		r.mustCreate(body(t, fmt.Sprintf("RL-%d", i), nil))
	}
	st := r.sb.Stats()
	if st.RateLimited != 5 || st.Creates != 5 || st.MaxPerSecond != 8 || r.sb.MaxPerSecond() != 8 || st.Requests["providers"] != 9 || st.Requests["create"] != 7 {
		t.Errorf("stats %+v", st)
	}
}

func TestThrottleRate(t *testing.T) {
	t.Parallel()
	r := newRig(t, sandbox.Options{Seed: 5, Faults: sandbox.Faults{ThrottleRate: 0.3}})
	var throttled int
	for i := range 40 {
		ref := fmt.Sprintf("T-%d", i)
		resp := r.mustCreate(body(t, ref, nil))
		switch resp.status {
		case 200:
		case 429:
			throttled++
			if resp.header.Get("Retry-After") != "0" || resp.env.Code != 429 {
				t.Errorf("429 without its Retry-After or envelope: %v %s", resp.header, resp.body)
			}
			if n := r.sb.CreateCounts()[ref]; n != 0 {
				t.Errorf("%s: created on a 429", ref)
			}
		default:
			t.Fatalf("HTTP %d %s", resp.status, resp.body)
		}
	}
	if st := r.sb.Stats(); throttled == 0 || throttled == 40 || st.RateLimited != throttled || st.Creates != 40-throttled {
		t.Errorf("%d 429s of 40 creates, stats %+v", throttled, st)
	}
}

func TestMaxInAnySecond(t *testing.T) {
	t.Parallel()
	r := newRig(t, sandbox.Options{})
	// 3 requests late in one second and 3 early in the next: 3 in either calendar second, 6 within
	// one second of each other.
	r.clk.Advance(700 * time.Millisecond)
	for range 3 {
		r.mustDo(http.MethodPost, sandbox.PathProviders, token, "", "")
	}
	r.clk.Advance(400 * time.Millisecond)
	for range 3 {
		r.mustDo(http.MethodPost, sandbox.PathProviders, token, "", "")
	}
	// A second later the first six have left the window.
	r.clk.Advance(time.Second)
	r.mustDo(http.MethodPost, sandbox.PathProviders, token, "", "")
	if st := r.sb.Stats(); st.MaxPerSecond != 3 || st.MaxInAnySecond != 6 {
		t.Errorf("max per calendar second %d, in any second %d; want 3 and 6", st.MaxPerSecond, st.MaxInAnySecond)
	}
	r.clk.Advance(300 * time.Millisecond)
	for range 6 {
		r.mustDo(http.MethodPost, sandbox.PathProviders, token, "", "")
	}
	if st := r.sb.Stats(); st.MaxInAnySecond != 7 {
		t.Errorf("max in any second %d, want 7", st.MaxInAnySecond)
	}
}

func TestInspectionEndpoints(t *testing.T) {
	t.Parallel()
	r := newRig(t, sandbox.Options{})
	r.mustCreate(body(t, "A", nil))
	r.mustCreate(body(t, "A", nil))
	r.mustCreate(body(t, "B", nil))
	if recs := rawPayouts(t, r); len(recs) != 3 || recs[0].ExternalInvoiceRef != "A" || recs[2].ExternalInvoiceRef != "B" || recs[0].Amount.String() != "12.5" {
		t.Errorf("payouts %+v", recs)
	}
	resp, err := r.ts.Client().Get(r.ts.URL + sandbox.PathInspectCreate)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var creates struct {
		Counts     map[string]int `json:"counts"`
		Duplicates []string       `json:"duplicates"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&creates); err != nil {
		t.Fatal(err)
	}
	if creates.Counts["A"] != 2 || creates.Counts["B"] != 1 || fmt.Sprint(creates.Duplicates) != "[A]" {
		t.Errorf("creates %+v", creates)
	}
	sresp, err := r.ts.Client().Get(r.ts.URL + sandbox.PathInspectStats)
	if err != nil {
		t.Fatal(err)
	}
	defer sresp.Body.Close()
	var st sandbox.Stats
	if err := json.NewDecoder(sresp.Body).Decode(&st); err != nil || st.Creates != 3 {
		t.Errorf("stats %+v, %v", st, err)
	}
}

func TestConcurrentCreates(t *testing.T) {
	t.Parallel()
	r := newRig(t, sandbox.Options{Now: time.Now, SettleInterval: time.Millisecond})
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			resp, err := r.create(body(t, fmt.Sprintf("C-%d", i), nil))
			if err != nil || resp.status != 200 {
				t.Errorf("C-%d: %v %d", i, err, resp.status)
			}
			r.get(fmt.Sprintf("C-%d", i))
		})
	}
	wg.Wait()
	if n := len(r.sb.CreateCounts()); n != 50 || len(r.sb.Duplicates()) != 0 {
		t.Errorf("%d refs", n)
	}
	seen := map[string]bool{}
	for _, rec := range r.sb.Payouts() {
		if seen[rec.InvoiceNo] {
			t.Errorf("invoice %s twice", rec.InvoiceNo)
		}
		seen[rec.InvoiceNo] = true
	}
}

func BenchmarkCreateParallel(b *testing.B) {
	r := newRig(b, sandbox.Options{Now: time.Now})
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := r.create(body(b, fmt.Sprintf("B-%d", n.Add(1)), nil))
			if err != nil || resp.status != 200 {
				b.Errorf("create: %v", err)
			}
		}
	})
}

// BenchmarkLookupPending is one lookup over HTTP while many payouts stay PENDING, as a reconcile
// of a large run sees it: the settling that each lookup does first must not cost what is pending.
func BenchmarkLookupPending(b *testing.B) {
	for _, pending := range []int{20_000, 100_000} {
		b.Run(fmt.Sprintf("pending=%d", pending), func(b *testing.B) {
			r := newRig(b, sandbox.Options{SettleAfter: time.Hour})
			createPending(b, r, pending)
			ref := fmt.Sprintf("L-%d", pending/2)
			for b.Loop() {
				if resp := r.get(ref); resp.status != http.StatusOK {
					b.Fatalf("lookup %s: HTTP %d %s", ref, resp.status, resp.body)
				}
			}
		})
	}
}

// createPending creates n payouts named L-0 to L-(n-1) from a few connections at once.
func createPending(b *testing.B, r *rig, n int) {
	b.Helper()
	const senders = 4
	var next atomic.Int64
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				if resp, err := r.create(body(b, fmt.Sprintf("L-%d", i), nil)); err != nil || resp.status != http.StatusOK {
					b.Errorf("create L-%d: %v", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
}
