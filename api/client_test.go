package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payout/payout/api"
	"github.com/shopspring/decimal"
)

const testToken = "s3cret-token-value"

// newTestClient starts h on loopback and returns a client for it.
func newTestClient(tb testing.TB, h http.Handler, mod ...func(*api.Config)) *api.Client {
	tb.Helper()
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	cfg := api.Config{BaseURL: srv.URL, AuthToken: testToken, Timeout: 5 * time.Second}
	for _, m := range mod {
		m(&cfg)
	}
	c, err := api.NewClient(cfg)
	if err != nil {
		tb.Fatalf("NewClient: %v", err)
	}
	tb.Cleanup(c.CloseIdleConnections)
	return c
}

// reply answers every request with status and body.
func reply(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func sampleRequest() api.CreatePayoutRequest {
	return api.CreatePayoutRequest{
		VirtualPoolReference: "VP-1",
		PayoutServiceID:      12,
		Amount:               decimal.RequireFromString("1250.5"),
		ClientRedirectURL:    "https://merchant.example/done",
		ClientCallbackURL:    "https://merchant.example/callback",
		ThirdPartyAccountNo:  "0012345678",
		RecipientReference:   "Siti",
		PaymentDescription:   "Salary",
		ExternalInvoiceRef:   "PAY-2026-11-0001",
	}
}

// call runs one operation of the client by name.
func call(ctx context.Context, c *api.Client, op string) error {
	var err error
	switch op {
	case "create":
		_, err = c.CreatePayout(ctx, sampleRequest())
	case "get":
		_, err = c.GetPayout(ctx, "PAY-2026-11-0001")
	case "list":
		_, err = c.ListProviders(ctx)
	default:
		panic(op)
	}
	return err
}

func wantKind(tb testing.TB, err error, want api.Kind) *api.Error {
	tb.Helper()
	if err == nil {
		tb.Fatalf("err = nil, want kind %v", want)
	}
	var e *api.Error
	if !errors.As(err, &e) {
		tb.Fatalf("err %v (%T) is not *api.Error", err, err)
	}
	if e.Kind != want || api.KindOf(err) != want {
		tb.Fatalf("kind = %v, want %v (err: %v)", e.Kind, want, err)
	}
	if strings.Contains(err.Error(), testToken) {
		tb.Fatalf("error text contains the auth token: %v", err)
	}
	return e
}

func TestNewClientConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cfg   api.Config
		field string // "" means valid
		err   error
	}{
		{"https remote", api.Config{BaseURL: "https://pay.example.com", AuthToken: "t"}, "", nil},
		{"https with path prefix", api.Config{BaseURL: "https://pay.example.com/gw/", AuthToken: "t"}, "", nil},
		{"http 127.0.0.1", api.Config{BaseURL: "http://127.0.0.1:8080", AuthToken: "t"}, "", nil},
		{"http 127.9.9.9", api.Config{BaseURL: "http://127.9.9.9", AuthToken: "t"}, "", nil},
		{"http localhost", api.Config{BaseURL: "http://localhost:9000", AuthToken: "t"}, "", nil},
		{"http ::1", api.Config{BaseURL: "http://[::1]:9000", AuthToken: "t"}, "", nil},
		{"http remote", api.Config{BaseURL: "http://pay.example.com", AuthToken: "t"}, "BaseURL", api.ErrInsecureURL},
		{"http localhost lookalike", api.Config{BaseURL: "http://localhost.example.com", AuthToken: "t"}, "BaseURL", api.ErrInsecureURL},
		{"ftp", api.Config{BaseURL: "ftp://127.0.0.1", AuthToken: "t"}, "BaseURL", api.ErrInvalidURL},
		{"no host", api.Config{BaseURL: "https://", AuthToken: "t"}, "BaseURL", api.ErrInvalidURL},
		{"user info", api.Config{BaseURL: "https://u:p@pay.example.com", AuthToken: "t"}, "BaseURL", api.ErrInvalidURL},
		{"empty base", api.Config{AuthToken: "t"}, "BaseURL", api.ErrMissing},
		{"empty token", api.Config{BaseURL: "https://pay.example.com"}, "AuthToken", api.ErrMissing},
		{"blank token", api.Config{BaseURL: "https://pay.example.com", AuthToken: "  "}, "AuthToken", api.ErrMissing},
		{"negative conns", api.Config{BaseURL: "https://pay.example.com", AuthToken: "t", MaxConns: -1}, "MaxConns", api.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := api.NewClient(tt.cfg)
			if tt.field == "" {
				if err != nil || c == nil {
					t.Fatalf("NewClient: %v", err)
				}
				return
			}
			var ce *api.ConfigError
			if !errors.As(err, &ce) || ce.Field != tt.field || !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want ConfigError{Field: %s} wrapping %v", err, tt.field, tt.err)
			}
			if strings.Contains(err.Error(), "u:p@") {
				t.Fatalf("error shows URL credentials: %v", err)
			}
		})
	}
}

func TestRequestHeaders(t *testing.T) {
	t.Parallel()
	for _, op := range []string{"create", "get", "list"} {
		t.Run(op, func(t *testing.T) {
			var got http.Header
			var method string
			c := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got, method = r.Header.Clone(), r.Method
				switch op {
				case "list":
					reply(200, `{"status":"ok","code":200,"data":{"list":{"data":[]}}}`)(w, r)
				default:
					reply(200, `{"status":"ok","code":2000,"data":{"payout_invoice_no":"INV1"}}`)(w, r)
				}
			}))
			if err := call(context.Background(), c, op); err != nil {
				t.Fatal(err)
			}
			if got.Get("auth-token") != testToken {
				t.Errorf("auth-token = %q", got.Get("auth-token"))
			}
			if got.Get("Accept") != "application/json" {
				t.Errorf("Accept = %q", got.Get("Accept"))
			}
			if method == http.MethodPost && got.Get("Content-Type") != "application/json" {
				t.Errorf("Content-Type = %q", got.Get("Content-Type"))
			}
			for k := range got {
				if strings.Contains(strings.ToLower(k), "idempotency") {
					t.Errorf("header %s sent", k)
				}
			}
			wantMethod := map[string]string{"create": "POST", "list": "POST", "get": "GET"}[op]
			if method != wantMethod {
				t.Errorf("method = %s, want %s", method, wantMethod)
			}
		})
	}
}

func TestCreatePayoutAmountWire(t *testing.T) {
	t.Parallel()
	tests := []struct{ amount, want string }{
		{"1250.5", "1250.50"},
		{"1250.50", "1250.50"},
		{"1000", "1000.00"},
		{"0.01", "0.01"},
		{"1234567.89", "1234567.89"},
	}
	for _, tt := range tests {
		t.Run(tt.amount, func(t *testing.T) {
			var body []byte
			c := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ = io.ReadAll(r.Body)
				reply(200, `{"status":"ok","code":200,"data":null}`)(w, r)
			}))
			req := sampleRequest()
			req.Amount = decimal.RequireFromString(tt.amount)
			if _, err := c.CreatePayout(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(body, []byte(`"amount":`+tt.want+`}`)) && !bytes.Contains(body, []byte(`"amount":`+tt.want+`,`)) {
				t.Fatalf("body %s lacks amount %s as a JSON number", body, tt.want)
			}
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.UseNumber()
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				t.Fatal(err)
			}
			if n, ok := m["amount"].(json.Number); !ok || n.String() != tt.want {
				t.Fatalf("amount = %#v, want number %s", m["amount"], tt.want)
			}
			for _, k := range []string{"virtual_pool_reference", "payout_service_id", "client_redirect_url",
				"client_callback_url", "third_party_account_no", "recipient_reference",
				"payment_description", "external_invoice_ref"} {
				if _, ok := m[k]; !ok {
					t.Errorf("field %s missing from %s", k, body)
				}
			}
			if m["third_party_account_no"] != "0012345678" {
				t.Errorf("account = %v, leading zeros lost", m["third_party_account_no"])
			}
		})
	}
}

func TestCreatePayoutRefusesSubCentAmount(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	c := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		reply(200, `{"status":"ok","code":200,"data":null}`)(w, r)
	}))
	req := sampleRequest()
	req.Amount = decimal.RequireFromString("10.005")
	_, err := c.CreatePayout(context.Background(), req)
	wantKind(t, err, api.KindRejected)
	if !errors.Is(err, api.ErrAmountPrecision) {
		t.Fatalf("err = %v, want ErrAmountPrecision", err)
	}
	if hits.Load() != 0 {
		t.Fatalf("request sent %d times", hits.Load())
	}
}

func TestGetPayoutPathEscaping(t *testing.T) {
	t.Parallel()
	tests := []struct{ ref, wantURI string }{
		{"INV/2026 01", "/api/v1/merchant/payout/INV%2F2026%2001"},
		{"PAY-1?x=1#y", "/api/v1/merchant/payout/PAY-1%3Fx=1%23y"},
		{"..", "/api/v1/merchant/payout/%2E%2E"},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			var uri string
			c := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				uri = r.RequestURI
				reply(200, `{"status":"ok","code":2000,"data":{"payout_invoice_no":"I"}}`)(w, r)
			}))
			if _, err := c.GetPayout(context.Background(), tt.ref); err != nil {
				t.Fatal(err)
			}
			if uri != tt.wantURI {
				t.Fatalf("request URI = %s, want %s", uri, tt.wantURI)
			}
		})
	}
}

func TestBaseURLPathPrefix(t *testing.T) {
	t.Parallel()
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		reply(200, `{"status":"ok","code":200,"data":{"list":{"data":[]}}}`)(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := api.NewClient(api.Config{BaseURL: srv.URL + "/gateway/", AuthToken: testToken})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListProviders(context.Background()); err != nil {
		t.Fatal(err)
	}
	if path != "/gateway/api/v1/merchant/list-payout-providers" {
		t.Fatalf("path = %s", path)
	}
}

func TestGetPayoutDecoding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       api.Payout
	}{
		{"documented sample", `{"status":"ok","code":2000,"data":{"value":1250.5,"external_invoice_ref":"R1","payout_invoice_no":"INV1","payout_account_number":"0012","created_at":"2026-11-22T08:00:00Z","transaction_status":"PENDING"},"uuid":"u1","message":null,"error":null}`,
			api.Payout{Value: decimal.RequireFromString("1250.5"), ExternalInvoiceRef: "R1", PayoutInvoiceNo: "INV1", PayoutAccountNumber: "0012", CreatedAt: "2026-11-22T08:00:00Z", TransactionStatus: "PENDING"}},
		{"value as string, code 200", `{"status":"ok","code":200,"data":{"value":"1250.50","payout_invoice_no":"INV1","transaction_status":"SUCCESS"}}`,
			api.Payout{Value: decimal.RequireFromString("1250.50"), PayoutInvoiceNo: "INV1", TransactionStatus: "SUCCESS"}},
		{"code as string, no status", `{"code":"2000","data":{"value":"7","payout_invoice_no":"INV1","transaction_status":"FAILED"}}`,
			api.Payout{Value: decimal.RequireFromString("7"), PayoutInvoiceNo: "INV1", TransactionStatus: "FAILED"}},
		{"unknown status kept", `{"status":"ok","code":2000,"data":{"value":1,"payout_invoice_no":"INV1","transaction_status":"PENDING_APPROVAL"}}`,
			api.Payout{Value: decimal.RequireFromString("1"), PayoutInvoiceNo: "INV1", TransactionStatus: "PENDING_APPROVAL"}},
		{"lower case status normalised", `{"status":"OK","code":2000,"data":{"value":1,"payout_invoice_no":"INV1","transaction_status":"success"}}`,
			api.Payout{Value: decimal.RequireFromString("1"), PayoutInvoiceNo: "INV1", TransactionStatus: "SUCCESS"}},
		{"unknown fields and numeric invoice", `{"status":"ok","code":2000,"extra":{"a":1},"data":{"value":2.10,"payout_invoice_no":12345,"bank":"x","transaction_status":"PENDING"}}`,
			api.Payout{Value: decimal.RequireFromString("2.10"), PayoutInvoiceNo: "12345", TransactionStatus: "PENDING"}},
		{"invoice_no and amount aliases", `{"status":"ok","code":2000,"data":{"amount":"3.30","invoice_no":"INV9","transaction_status":"PENDING"}}`,
			api.Payout{Value: decimal.RequireFromString("3.30"), PayoutInvoiceNo: "INV9", TransactionStatus: "PENDING"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestClient(t, reply(200, tt.body))
			got, err := c.GetPayout(context.Background(), "R1")
			if err != nil {
				t.Fatal(err)
			}
			if !got.Value.Equal(tt.want.Value) {
				t.Errorf("value = %s, want %s", got.Value, tt.want.Value)
			}
			got.Value, tt.want.Value = decimal.Zero, decimal.Zero
			if got != tt.want {
				t.Errorf("payout = %+v, want %+v", got, tt.want)
			}
			if got.Final() != (got.TransactionStatus == api.StatusSuccess || got.TransactionStatus == api.StatusFailed) {
				t.Errorf("Final() = %v for %q", got.Final(), got.TransactionStatus)
			}
		})
	}
}

func TestCreatePayoutDecoding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body          string
		wantInvoice, wantSt string
		wantPayout          bool
	}{
		{"payout fields", `{"status":"ok","code":200,"data":{"payout_invoice_no":"INV1","transaction_status":"PENDING","value":"1250.50"}}`, "INV1", "PENDING", true},
		{"invoice_no only", `{"status":"ok","code":2000,"data":{"invoice_no":"INV2"}}`, "INV2", "", true},
		{"nested payout", `{"status":"ok","code":200,"data":{"payout":{"payout_invoice_no":"INV3","transaction_status":"PENDING"}}}`, "INV3", "PENDING", true},
		{"data null", `{"status":"ok","code":200,"data":null}`, "", "", false},
		{"data missing", `{"status":"ok"}`, "", "", false},
		{"data a string", `{"status":"ok","code":200,"data":"accepted"}`, "", "", false},
		{"data without invoice", `{"status":"ok","code":200,"data":{"queued":true}}`, "", "", false},
		{"unreadable amount keeps invoice", `{"status":"ok","code":200,"data":{"payout_invoice_no":"INV4","value":"n/a"}}`, "INV4", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestClient(t, reply(200, tt.body))
			res, err := c.CreatePayout(context.Background(), sampleRequest())
			if err != nil {
				t.Fatal(err)
			}
			if res.InvoiceNo != tt.wantInvoice || res.TransactionStatus != tt.wantSt || (res.Payout != nil) != tt.wantPayout {
				t.Fatalf("result = %+v (payout %v), want invoice %q status %q payout %v", res, res.Payout, tt.wantInvoice, tt.wantSt, tt.wantPayout)
			}
		})
	}
}

func TestListProviders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want []api.Provider
	}{
		{"documented", `{"status":"ok","code":200,"data":{"list":{"draw":1,"record_filtered":2,"record_total":2,"data":[{"payout_provider_id":12,"name":"Maybank"},{"payout_provider_id":"13","name":"CIMB"}]}}}`,
			[]api.Provider{{ID: 12, Name: "Maybank"}, {ID: 13, Name: "CIMB"}}},
		{"data is the array", `{"status":"ok","code":200,"data":[{"payout_provider_id":1,"name":"RHB"}]}`,
			[]api.Provider{{ID: 1, Name: "RHB"}}},
		{"list is the array", `{"status":"ok","code":200,"data":{"list":[{"payout_provider_id":2,"name":"TNG"}]}}`,
			[]api.Provider{{ID: 2, Name: "TNG"}}},
		{"empty list", `{"status":"ok","code":200,"data":{"list":{"record_total":0,"data":[]}}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestClient(t, reply(200, tt.body))
			got, err := c.ListProviders(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestListProvidersPaging(t *testing.T) {
	t.Parallel()
	all := []api.Provider{{1, "A"}, {2, "B"}, {3, "C"}, {4, "D"}, {5, "E"}}
	page := func(start int) string {
		end := min(start+2, len(all))
		b, _ := json.Marshal(all[start:end])
		return `{"status":"ok","code":200,"data":{"list":{"draw":1,"record_total":5,"data":` + string(b) + `}}}`
	}
	t.Run("service honours start", func(t *testing.T) {
		var calls atomic.Int32
		c := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			var p struct{ Start int }
			json.NewDecoder(r.Body).Decode(&p)
			reply(200, page(p.Start))(w, r)
		}))
		got, err := c.ListProviders(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 5 || calls.Load() != 3 {
			t.Fatalf("got %v in %d calls, want 5 providers in 3", got, calls.Load())
		}
	})
	t.Run("service ignores paging", func(t *testing.T) {
		var calls atomic.Int32
		c := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			reply(200, page(0))(w, r)
		}))
		got, err := c.ListProviders(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || calls.Load() != 2 {
			t.Fatalf("got %v in %d calls, want 2 providers in 2 calls", got, calls.Load())
		}
	})
	t.Run("service refuses page body", func(t *testing.T) {
		c := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > 0 {
				reply(400, `{"status":"fail","code":1234,"data":null,"message":"unexpected body"}`)(w, r)
				return
			}
			reply(200, page(0))(w, r)
		}))
		got, err := c.ListProviders(context.Background())
		if err != nil || len(got) != 2 {
			t.Fatalf("got %v, %v; want the first page", got, err)
		}
	})
}

func TestErrorClasses(t *testing.T) {
	t.Parallel()
	const failDup = `{"status":"fail","code":1234,"data":null,"message":"external_invoice_ref already exists","uuid":"u-9"}`
	tests := []struct {
		name    string
		op      string
		handler http.HandlerFunc
		want    api.Kind
	}{
		{"create 500", "create", reply(500, `{"status":"fail","code":500,"data":null}`), api.KindOutcomeUnknown},
		{"create 502 html", "create", reply(502, `<html>bad gateway</html>`), api.KindOutcomeUnknown},
		{"get 503", "get", reply(503, ``), api.KindRetryable},
		{"list 500", "list", reply(500, ``), api.KindRetryable},
		{"create 400", "create", reply(400, `{"status":"fail","code":1234,"data":null,"message":"amount invalid"}`), api.KindRejected},
		{"create 404 endpoint missing", "create", reply(404, `404 page not found`), api.KindNotFound},
		{"list 404", "list", reply(404, `404 page not found`), api.KindRejected},
		{"create 422 no body", "create", reply(422, ``), api.KindRejected},
		{"create 401", "create", reply(401, `{"status":"fail","code":401,"data":null}`), api.KindUnauthorized},
		{"get 403", "get", reply(403, ``), api.KindUnauthorized},
		{"list 400 about token", "list", reply(400, `{"status":"fail","code":1234,"data":null,"message":"Invalid auth-token"}`), api.KindUnauthorized},
		{"create 409", "create", reply(409, `{"status":"fail","code":409,"data":null}`), api.KindDuplicate},
		{"create 400 already exists", "create", reply(400, failDup), api.KindDuplicate},
		{"create fail envelope", "create", reply(200, `{"status":"fail","code":1234,"data":null,"message":"bad account"}`), api.KindRejected},
		{"create fail duplicate", "create", reply(200, failDup), api.KindDuplicate},
		{"create fail token", "create", reply(200, `{"status":"fail","code":1234,"data":null,"error":"token expired"}`), api.KindUnauthorized},
		{"create fail code 500", "create", reply(200, `{"status":"fail","code":500,"data":null}`), api.KindOutcomeUnknown},
		{"create 2xx not json", "create", reply(200, `<html>ok</html>`), api.KindOutcomeUnknown},
		{"create 2xx empty", "create", reply(201, ``), api.KindOutcomeUnknown},
		{"create 2xx no envelope", "create", reply(200, `{"payout_invoice_no":"X"}`), api.KindOutcomeUnknown},
		{"create code only, unknown", "create", reply(200, `{"code":2001,"data":{"payout_invoice_no":"X"}}`), api.KindOutcomeUnknown},
		{"get code only, unknown", "get", reply(200, `{"code":1234,"data":null}`), api.KindRetryable},
		{"create fail but code 200", "create", reply(200, `{"status":"fail","code":200,"data":null}`), api.KindOutcomeUnknown},
		{"get 404 envelope", "get", reply(404, `{"status":"fail","code":404,"data":null,"message":"Payout not found"}`), api.KindNotFound},
		{"get 404 html", "get", reply(404, `404 page not found`), api.KindRetryable},
		{"get 404 route", "get", reply(404, `{"status":"fail","code":404,"data":null,"message":"Route not found"}`), api.KindRetryable},
		{"get fail code 404", "get", reply(200, `{"status":"fail","code":404,"data":null}`), api.KindNotFound},
		{"get fail no record", "get", reply(200, `{"status":"fail","code":1234,"data":null,"message":"No record found for reference"}`), api.KindNotFound},
		{"get fail payout does not exist", "get", reply(200, `{"status":"fail","code":1234,"data":null,"error":"payout does not exist"}`), api.KindNotFound},
		{"get fail ambiguous", "get", reply(200, `{"status":"fail","code":1234,"data":null,"message":"something went wrong"}`), api.KindRetryable},
		{"get fail merchant not found", "get", reply(200, `{"status":"fail","code":1234,"data":null,"message":"merchant not found"}`), api.KindRetryable},
		{"get fail data not found", "get", reply(200, `{"status":"fail","code":1234,"data":null,"message":"data not found"}`), api.KindRetryable},
		{"get ok without data", "get", reply(200, `{"status":"ok","code":2000,"data":null}`), api.KindRetryable},
		{"get ok bad value", "get", reply(200, `{"status":"ok","code":2000,"data":{"value":"1,250.00"}}`), api.KindRetryable},
		{"get 400", "get", reply(400, `{"status":"fail","code":1234,"data":null,"message":"bad reference"}`), api.KindRejected},
		{"list fail envelope", "list", reply(200, `{"status":"fail","code":1234,"data":null}`), api.KindRetryable},
		{"list ok no list", "list", reply(200, `{"status":"ok","code":200,"data":{}}`), api.KindRetryable},
		{"get 307", "get", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		}, api.KindRejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestClient(t, tt.handler)
			wantKind(t, call(context.Background(), c, tt.op), tt.want)
		})
	}
}

func TestErrorCarriesEnvelope(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, reply(400, `{"status":"fail","code":1234,"data":null,"message":"bad `+testToken+`","error":"E1","uuid":"u-77"}`))
	_, err := c.CreatePayout(context.Background(), sampleRequest())
	e := wantKind(t, err, api.KindRejected)
	if e.HTTPStatus != 400 || e.Code != 1234 || e.Status != "fail" || e.ErrorText != "E1" || e.UUID != "u-77" || e.Op != "create payout" {
		t.Fatalf("error = %+v", e)
	}
	if strings.Contains(e.Message, testToken) {
		t.Fatalf("message echoes the token: %q", e.Message)
	}
	if !errors.Is(err, api.ErrRejected) || errors.Is(err, api.ErrOutcomeUnknown) {
		t.Fatalf("errors.Is does not follow the kind: %v", err)
	}
}

func TestRateLimited(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name, header string
		want         time.Duration
	}{
		{"seconds", "7", 7 * time.Second},
		{"http date", now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{"date in the past", now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{"absent", "", time.Second},
		{"garbage", "soon", time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.header != "" {
					w.Header().Set("Retry-After", tt.header)
				}
				reply(429, `{"status":"fail","code":429,"data":null}`)(w, r)
			}), func(cfg *api.Config) { cfg.Now = func() time.Time { return now } })
			for _, op := range []string{"create", "get"} {
				e := wantKind(t, call(context.Background(), c, op), api.KindRateLimited)
				if e.RetryAfter != tt.want {
					t.Fatalf("%s: RetryAfter = %v, want %v", op, e.RetryAfter, tt.want)
				}
			}
		})
	}
}

func TestConnectionRefusedIsRetryable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, err := api.NewClient(api.Config{BaseURL: "http://" + addr, AuthToken: testToken, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"create", "get", "list"} {
		wantKind(t, call(context.Background(), c, op), api.KindRetryable)
	}
}

// blockingServer accepts requests, reports each on got, and answers none until the test ends.
func blockingServer(tb testing.TB) (url string, got <-chan struct{}) {
	tb.Helper()
	release := make(chan struct{})
	ch := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		ch <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	tb.Cleanup(srv.Close)
	tb.Cleanup(func() { close(release) })
	return srv.URL, ch
}

func TestCreateTimeoutIsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	url, _ := blockingServer(t)
	c, err := api.NewClient(api.Config{BaseURL: url, AuthToken: testToken, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	wantKind(t, call(context.Background(), c, "create"), api.KindOutcomeUnknown)
	wantKind(t, call(context.Background(), c, "get"), api.KindRetryable)
}

func TestCreateCanceledAfterWriteIsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	url, got := blockingServer(t)
	c, err := api.NewClient(api.Config{BaseURL: url, AuthToken: testToken})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-got
		cancel()
	}()
	err = call(ctx, c, "create")
	wantKind(t, err, api.KindOutcomeUnknown)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want it to wrap context.Canceled", err)
	}
}

func TestCreateCanceledBeforeSendIsRetryable(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	c := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	wantKind(t, call(ctx, c, "create"), api.KindRetryable)
	if hits.Load() != 0 {
		t.Fatalf("request reached the server")
	}
}

func TestConnectionClosedAfterRequest(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	c := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.Copy(io.Discard, r.Body)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		conn.Close()
	}))
	wantKind(t, call(context.Background(), c, "create"), api.KindOutcomeUnknown)
	if hits.Load() != 1 {
		t.Fatalf("create reached the server %d times, want exactly 1", hits.Load())
	}
	wantKind(t, call(context.Background(), c, "get"), api.KindRetryable)
}

func TestRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	hits := map[string]int{}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/merchant/payout", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.Method+" "+r.URL.Path]++
		mu.Unlock()
		http.Redirect(w, r, "/other", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/other", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits["other"]++
		mu.Unlock()
		reply(200, `{"status":"ok","code":200,"data":null}`)(w, r)
	})
	c := newTestClient(t, mux)
	err := call(context.Background(), c, "create")
	wantKind(t, err, api.KindOutcomeUnknown)
	if !errors.Is(err, api.ErrRedirect) {
		t.Fatalf("err = %v, want ErrRedirect", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits["POST /api/v1/merchant/payout"] != 1 || hits["other"] != 0 {
		t.Fatalf("hits = %v, want one POST and no redirect followed", hits)
	}
}

func TestResponseBodyLimit(t *testing.T) {
	t.Parallel()
	big := `{"status":"ok","code":2000,"data":{"payout_invoice_no":"` + strings.Repeat("x", 2048) + `"}}`
	limit := func(cfg *api.Config) { cfg.MaxResponseBytes = 1024 }
	c := newTestClient(t, reply(200, big), limit)
	err := call(context.Background(), c, "create")
	wantKind(t, err, api.KindOutcomeUnknown)
	if !errors.Is(err, api.ErrBodyTooLarge) {
		t.Fatalf("err = %v, want ErrBodyTooLarge", err)
	}
	wantKind(t, call(context.Background(), c, "get"), api.KindRetryable)

	small := newTestClient(t, reply(200, `{"status":"ok","code":2000,"data":{"payout_invoice_no":"I"}}`), limit)
	if err := call(context.Background(), small, "get"); err != nil {
		t.Fatalf("small body refused: %v", err)
	}
}

func TestGetPayoutEmptyReference(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, reply(200, `{}`))
	_, err := c.GetPayout(context.Background(), "")
	wantKind(t, err, api.KindRejected)
	if !errors.Is(err, api.ErrEmptyReference) {
		t.Fatalf("err = %v", err)
	}
}

func TestKindOf(t *testing.T) {
	t.Parallel()
	if api.KindOf(nil) != api.KindNone || api.KindOf(errors.New("x")) != api.KindNone {
		t.Fatal("KindOf of a non-api error is not KindNone")
	}
	wrapped := errors.Join(errors.New("ctx"), &api.Error{Op: "x", Kind: api.KindDuplicate})
	if api.KindOf(wrapped) != api.KindDuplicate || !errors.Is(wrapped, api.ErrDuplicate) {
		t.Fatal("KindOf/Is do not see a wrapped *Error")
	}
	names := map[api.Kind]string{
		api.KindNone: "none", api.KindRejected: "rejected", api.KindRetryable: "retryable",
		api.KindRateLimited: "rate limited", api.KindOutcomeUnknown: "outcome unknown",
		api.KindUnauthorized: "unauthorized", api.KindNotFound: "not found", api.KindDuplicate: "duplicate",
		api.Kind(99): "Kind(99)",
	}
	for k, want := range names {
		if k.String() != want {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), k.String(), want)
		}
	}
}

func TestGetPayoutAnswerMustBeAboutTheReference(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data string
		ok   bool
	}{
		{"empty object", `{}`, false},
		{"another payout", `{"external_invoice_ref":"OTHER-1","payout_invoice_no":"INV-9","transaction_status":"PENDING"}`, false},
		{"the reference", `{"external_invoice_ref":"REF-1","payout_invoice_no":"INV-1","transaction_status":"PENDING"}`, true},
		{"only the invoice number", `{"payout_invoice_no":"INV-1","transaction_status":"SUCCESS"}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, `{"status":"ok","code":2000,"data":%s}`, tt.data)
			}))
			defer srv.Close()
			c, err := api.NewClient(api.Config{BaseURL: srv.URL, AuthToken: "t"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.GetPayout(context.Background(), "REF-1")
			if tt.ok != (err == nil) {
				t.Fatalf("err %v, want ok=%v", err, tt.ok)
			}
			if err != nil && api.KindOf(err) != api.KindRetryable {
				t.Errorf("kind %v, want retryable: such an answer must never read as found or not found", api.KindOf(err))
			}
		})
	}
}
