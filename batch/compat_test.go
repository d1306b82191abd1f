package batch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/ledger"
)

// compatService is a payout service written from the same interface as the sandbox but reading
// its silences differently; each field is one such reading.
type compatService struct {
	getCode      int    // Get Payout's success code: 200 or 2000
	createData   string // what Create Payout's data holds: payout, null, invoice, string, nested
	valueText    bool   // value as decimal text rather than a number
	numericIDs   bool   // invoice numbers as JSON numbers; provider ids as strings
	lowerStatus  bool   // transaction_status in lower case
	createdAt    string // created_at's layout
	notFound     string // unknown reference: 404 (envelope), fail-message, fail-code404, framework
	moreRecords  bool   // record_total larger than the list, page parameters ignored
	failWithHTTP int    // HTTP status of a refusal: 200 (status fail) or 400
	settled      string // the status a payout is created with
	invoiceOnly  bool   // Get Payout finds a payout by its invoice number only
	invisible    int    // a payout is found by its reference only after this many lookups
	lostAs       string // how a lost answer looks: a bare 502, or 200 with text, or a contradiction
	// collision: the lost answer's row was never created, and another payout's invoice number is
	// its reference, which Get Payout finds by that invoice number.
	collision bool
	// lostAnswer: created, then answered without a usable answer. refusedButCreated: created,
	// then answered fail. refused: refused without creating.
	lostAnswer, refusedButCreated, refused map[string]bool

	mu      sync.Mutex
	payouts map[string]map[string]any // by external_invoice_ref
	looked  map[string]int            // lookups by external_invoice_ref
	creates map[string]int
	next    int
}

func (f *compatService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Header.Get("auth-token") != batchtest.Token {
		f.fail(w, 401, 401, "Unauthorized")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/api/v1/merchant/list-payout-providers":
		f.providers(w)
	case r.Method == http.MethodPost && r.URL.Path == "/api/v1/merchant/payout":
		f.create(w, body)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/v1/merchant/payout/"):
		f.get(w, strings.TrimPrefix(r.URL.Path, "/api/v1/merchant/payout/"))
	default:
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"detail":"Not Found"}`)
	}
}

func (f *compatService) envelope(w http.ResponseWriter, httpStatus int, status string, code int, data any, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpStatus)
	env := map[string]any{"status": status, "code": code, "data": data, "uuid": fmt.Sprintf("req-%d", f.next),
		"message": msg, "error": nil, "server_time": time.Now().UTC().Format(time.RFC3339Nano), "meta": map[string]any{"v": 1}}
	json.NewEncoder(w).Encode(env)
}

func (f *compatService) fail(w http.ResponseWriter, httpStatus, code int, msg string) {
	f.envelope(w, httpStatus, "fail", code, nil, msg)
}

func (f *compatService) providers(w http.ResponseWriter) {
	var list []map[string]any
	for _, p := range sandbox.DefaultProviders() {
		var id any = p.ID
		if f.numericIDs {
			id = fmt.Sprint(p.ID)
		}
		list = append(list, map[string]any{"payout_provider_id": id, "name": p.Name, "logo": "x.png", "is_active": 1})
	}
	total := len(list)
	if f.moreRecords {
		total += 40
	}
	f.envelope(w, 200, "ok", 200, map[string]any{"list": map[string]any{"draw": 1, "record_filtered": total, "record_total": total, "data": list}}, "")
}

func (f *compatService) create(w http.ResponseWriter, body []byte) {
	var req struct {
		Ref     string      `json:"external_invoice_ref"`
		Amount  json.Number `json:"amount"`
		Account string      `json:"third_party_account_no"`
	}
	if err := json.Unmarshal(body, &req); err != nil || req.Ref == "" {
		f.fail(w, f.failWithHTTP, 1234, "The external invoice ref field is required.")
		return
	}
	if f.payouts[req.Ref] != nil {
		f.fail(w, f.failWithHTTP, 1234, "The external invoice ref has already been taken.")
		return
	}
	if f.refused[req.Ref] {
		f.fail(w, f.failWithHTTP, 1234, "The third party account no is invalid.")
		return
	}
	if f.collision && f.lostAnswer[req.Ref] {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	f.next++
	f.creates[req.Ref]++
	var invoice any = fmt.Sprintf("PO%08d", f.next)
	if f.numericIDs {
		invoice = 90000000 + f.next
	}
	var value any = json.Number(req.Amount)
	if f.valueText {
		value = string(req.Amount)
	}
	status := f.settled
	if f.lowerStatus {
		status = strings.ToLower(status)
	}
	p := map[string]any{"value": value, "external_invoice_ref": req.Ref, "payout_invoice_no": invoice,
		"payout_account_number": req.Account, "created_at": time.Now().Format(f.createdAt),
		"transaction_status": status, "currency": "MYR", "fee": "0.50"}
	f.payouts[req.Ref] = p
	switch {
	case f.lostAnswer[req.Ref] && f.lostAs == "text":
		io.WriteString(w, "OK")
		return
	case f.lostAnswer[req.Ref] && f.lostAs == "contradiction":
		f.envelope(w, 200, "fail", 200, nil, "")
		return
	case f.lostAnswer[req.Ref]:
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "<html>502 Bad Gateway</html>")
		return
	case f.refusedButCreated[req.Ref]:
		f.fail(w, f.failWithHTTP, 1234, "Transaction could not be processed")
		return
	}
	var data any
	switch f.createData {
	case "payout":
		data = p
	case "invoice":
		data = map[string]any{"payout_invoice_no": invoice}
	case "string":
		data = invoice
	case "nested":
		data = map[string]any{"payout": p}
	}
	f.envelope(w, 200, "ok", 200, data, "Payout created")
}

func (f *compatService) get(w http.ResponseWriter, ref string) {
	f.looked[ref]++
	for _, p := range f.payouts {
		byRef := p["external_invoice_ref"] == ref && !f.invoiceOnly && f.looked[ref] > f.invisible
		if byRef || fmt.Sprint(p["payout_invoice_no"]) == ref {
			f.envelope(w, 200, "ok", f.getCode, p, "")
			return
		}
	}
	switch f.notFound {
	case "404":
		f.fail(w, 404, 404, "Payout not found")
	case "fail-message":
		f.fail(w, 200, 1234, "payout not found")
	case "fail-code404":
		f.fail(w, 200, 404, "Not Found")
	default: // a framework's answer: nothing in it says the payout does not exist
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"message":"Not Found."}`)
	}
}

// TestRunAgainstOtherReadings pays a file against services that read the interface's silences
// otherwise, and checks the run's guarantees: every row created at most once, a created row never
// FAILED unless the service says so, a row the service refused and does not hold FAILED only
// when a lookup says it does not exist, and every payout the service holds found with its
// invoice number.
func TestRunAgainstOtherReadings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		edit func(*compatService)
	}{
		{"as documented", func(f *compatService) {}},
		{"get code 200, value as text", func(f *compatService) { f.getCode, f.valueText = 200, true }},
		{"create data null", func(f *compatService) { f.createData = "null" }},
		{"create data invoice only", func(f *compatService) { f.createData = "invoice" }},
		{"create data a string", func(f *compatService) { f.createData = "string" }},
		{"create data nested", func(f *compatService) { f.createData = "nested" }},
		{"numeric invoices, string provider ids", func(f *compatService) { f.numericIDs = true }},
		{"lower-case status, success at once", func(f *compatService) { f.lowerStatus, f.settled = true, api.StatusSuccess }},
		{"created_at with offset and fraction", func(f *compatService) { f.createdAt = "2006-01-02T15:04:05.000-07:00" }},
		{"record_total larger, no paging", func(f *compatService) { f.moreRecords = true }},
		{"refusals as HTTP 400", func(f *compatService) { f.failWithHTTP = 400 }},
		{"not found as fail message", func(f *compatService) { f.notFound = "fail-message" }},
		{"not found as code 404", func(f *compatService) { f.notFound = "fail-code404"; f.createData = "null" }},
		{"not found as a framework 404", func(f *compatService) { f.notFound = "framework"; f.createData = "null" }},
		{"lookups by invoice number only", func(f *compatService) { f.invoiceOnly = true }},
		{"payouts visible to lookups late", func(f *compatService) { f.invisible = 4 }},
		{"an answer of plain text", func(f *compatService) { f.lostAs = "text" }},
		{"an answer that contradicts itself", func(f *compatService) { f.lostAs = "contradiction" }},
		{"a reference that is another payout's invoice number", func(f *compatService) {
			f.collision = true
			f.payouts["OTHER-1"] = map[string]any{"value": "5.00", "external_invoice_ref": "OTHER-1",
				"payout_invoice_no": "COMPAT-00002", "payout_account_number": "999", "transaction_status": "SUCCESS"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Row 2's answer is lost, row 3 is created but answered fail, row 4 is refused.
			f := &compatService{getCode: 2000, createData: "payout", createdAt: time.RFC3339, notFound: "404",
				failWithHTTP: 200, settled: api.StatusPending,
				lostAnswer:        map[string]bool{"COMPAT-00002": true},
				refusedButCreated: map[string]bool{"COMPAT-00003": true},
				refused:           map[string]bool{"COMPAT-00004": true},
				payouts:           map[string]map[string]any{}, creates: map[string]int{}, looked: map[string]int{}}
			tc.edit(f)
			runAgainst(t, f)
		})
	}
}

func runAgainst(t *testing.T, f *compatService) {
	ctx := context.Background()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	client, err := api.NewClient(api.Config{BaseURL: srv.URL, AuthToken: batchtest.Token, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h := batchtest.NewUnthrottledHarness(t, sandbox.Options{}, 4)
	rows := batchtest.Payroll(6, "COMPAT")
	res := h.Run(ctx, batchtest.WritePayroll(t, h.Dir, "compat.csv", rows), func(c *batch.Config) {
		c.Service, c.MaxLookupErrors = client, 3
		c.Clock = batchtest.NewJumpingClock(time.Now()) // the graces and the retries' waits are all sleeps: none is real
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	// Where lookups miss payouts that exist, rows whose outcome is not sure stay UNKNOWN.
	blind := f.invoiceOnly || f.invisible > 0
	for _, r := range rows {
		p, err := h.DB.Get(ctx, r.Ref)
		if err != nil {
			t.Fatalf("ledger lost %s: %v", r.Ref, err)
		}
		held := f.payouts[r.Ref]
		switch {
		case f.collision && f.lostAnswer[r.Ref]:
			if p.State != ledger.Unknown || f.creates[r.Ref] != 0 {
				t.Errorf("%s: state %s, invoice %q, created %d times: want UNKNOWN and never created", r.Ref, p.State, p.InvoiceNo, f.creates[r.Ref])
			}
		case !f.refused[r.Ref] && f.creates[r.Ref] != 1:
			t.Errorf("%s created %d times", r.Ref, f.creates[r.Ref])
		case held == nil && p.State == ledger.Failed && !outcome.FailureConfirmed(p):
			t.Errorf("%s: FAILED without a confirmation: %q", r.Ref, p.LastError)
		case held == nil && p.State != ledger.Failed && p.State != ledger.Unknown:
			t.Errorf("%s: never created, ledger state %s", r.Ref, p.State)
		case held == nil && p.State == ledger.Unknown && f.notFound != "framework" && !blind:
			t.Errorf("%s: refused and not found, left UNKNOWN: %q", r.Ref, p.LastError)
		case held != nil && p.State == ledger.Failed:
			t.Errorf("%s: the service holds it %v, the ledger says FAILED: %q", r.Ref, held["transaction_status"], p.LastError)
		case held != nil && p.State != ledger.Unknown && p.InvoiceNo != fmt.Sprint(held["payout_invoice_no"]):
			t.Errorf("%s: ledger invoice %q (state %s, %q), service %v", r.Ref, p.InvoiceNo, p.State, p.LastError, held["payout_invoice_no"])
		case held != nil && blind && p.State == ledger.Unknown:
			// Not found by its reference: left for reconciliation, never sent again.
		case held != nil && !p.State.Accepted():
			t.Errorf("%s: the service holds it, ledger state %s: %q", r.Ref, p.State, p.LastError)
		}
	}
	if res.ExitCode != exitcode.Attention {
		t.Errorf("exit code %d, want %d (one row refused): %+v", res.ExitCode, exitcode.Attention, res)
	}
}

// TestRunRefusedTokenOtherReadings: a refused token, as HTTP 401 or as status fail with code 401
// in an HTTP 200, stops the run before anything is sent.
func TestRunRefusedTokenOtherReadings(t *testing.T) {
	t.Parallel()
	for _, httpStatus := range []int{http.StatusUnauthorized, http.StatusOK} {
		t.Run(http.StatusText(httpStatus), func(t *testing.T) {
			var sent atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost && r.URL.Path == "/api/v1/merchant/payout" {
					sent.Add(1)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(httpStatus)
				io.WriteString(w, `{"status":"fail","code":401,"data":null,"uuid":"u-1","message":"Unauthenticated.","error":null}`)
			}))
			t.Cleanup(srv.Close)
			client, err := api.NewClient(api.Config{BaseURL: srv.URL, AuthToken: "wrong-token-0123456789", Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			h := batchtest.NewUnthrottledHarness(t, sandbox.Options{}, 2)
			rows := batchtest.Payroll(2, "TOKEN")
			res, err := batch.NewRunner(func() batch.Config { c := h.Cfg; c.Service = client; return c }()).
				Run(context.Background(), batchtest.WritePayroll(t, h.Dir, "token.csv", rows))
			if sent.Load() != 0 || res.Succeeded+res.Submitted+res.Pending != 0 {
				t.Fatalf("sent %d payouts with a refused token: %+v, %v", sent.Load(), res, err)
			}
			if err == nil || !strings.Contains(err.Error(), "refused the auth token") {
				t.Fatalf("run %+v, error %v: want the refused token said", res, err)
			}
		})
	}
}

// TestRunTokenRefusedMidRunSaysToCorrectIt: a token the service refuses once the run has begun
// sending stops the run, and its result and reports say to correct the token before running it
// again, not only to run it again.
func TestRunTokenRefusedMidRunSaysToCorrectIt(t *testing.T) {
	t.Parallel()
	h := batchtest.NewUnthrottledHarness(t, sandbox.Options{}, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/api/v1/merchant/payout" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"status":"fail","code":401,"data":null,"uuid":"u-1","message":"Unauthenticated.","error":null}`)
			return
		}
		h.Sandbox.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	client, err := api.NewClient(api.Config{BaseURL: srv.URL, AuthToken: batchtest.Token, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cfg := h.Cfg
	cfg.Service = client
	res, err := batch.NewRunner(cfg).Run(context.Background(), batchtest.WritePayroll(t, h.Dir, "token.csv", batchtest.Payroll(2, "MIDTOKEN")))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.ExitCode != exitcode.Aborted || !strings.Contains(res.ResumeAdvice, "correct the token") {
		t.Fatalf("exit %d, advice %q: want %d and to correct the token", res.ExitCode, res.ResumeAdvice, exitcode.Aborted)
	}
	pages := 0
	for _, p := range res.Reports {
		if !strings.HasSuffix(p, ".report.html") {
			continue
		}
		pages++
		page := batchtest.ReadFile(t, p)
		if !strings.Contains(page, "correct the token") || strings.Contains(page, "— run the same command again to resume") {
			t.Errorf("%s does not say to correct the token first", p)
		}
	}
	if pages != 1 {
		t.Errorf("the aborted run's reports %q hold %d HTML pages, want 1", res.Reports, pages)
	}
}
