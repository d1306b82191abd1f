package main_test

import (
	"bytes"
	"database/sql"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/internal/fakeclock"
)

// A callback that comes while its payout awaits its invoice number (the create's answer lost, the
// lookups refused) is stored and answered 503 by `payout callbacks`, every time the service tries
// it; once `payout reconcile` has recorded the number, the service's next delivery of the same
// callback is applied, and `payout status` shows the bank's name for the account, flagged as
// another's. Answered 200 as an unknown invoice, the callback would never come again, and the
// name would be lost.
func TestCommandEarlyCallbackKeepsItsNameCheck(t *testing.T) {
	t.Parallel() // a ledger, a sandbox, a receiver and folders of its own
	const ref, otherName = "PAY-2026-11-001", "TAN WEI JIE"
	clock := fakeclock.New(time.Now())
	sb := sandbox.New(sandbox.Options{AuthToken: "e2e-token", HashKey: []byte("e2e-hash-key"), Now: clock.Now,
		SettleAfter: time.Hour, SettleInterval: -1, SendCallbacks: true, DisplayNames: map[string]string{ref: otherName},
		Faults: sandbox.Faults{LostResponseRate: 1, ThrottleLookups: 1}})
	t.Cleanup(sb.Close)
	u := newUser(t, sb)
	receiver := startServer(t, u, []string{"PAYOUT_HASH_KEY=e2e-hash-key"}, "callbacks", "--listen", "127.0.0.1:0")
	u.env = append(u.env, "PAYOUT_CALLBACK_URL="+receiver)
	if out, errOut, code := u.run("run", samplePath(t)); code != 1 && code != 4 {
		t.Fatalf("run whose every answer is lost: exit %d: %s %s; want 1 or 4", code, out, errOut)
	}
	if out, _, _ := u.run("status", ref); !hasField(out, "state", "UNKNOWN") {
		t.Fatalf("status %s after the run: want UNKNOWN:\n%s", ref, out)
	}

	// The service settles what it created, and tries each callback: the ledger holds none of
	// their invoice numbers yet.
	sb.SetFaults(sandbox.Faults{})
	clock.Advance(2 * time.Hour)
	sb.Settle()
	created := len(sb.Payouts())
	for deadline := time.Now().Add(30 * time.Second); sb.Stats().Callbacks+sb.Stats().CallbackFailures < created && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
	}
	if st := sb.Stats(); st.Callbacks != 0 || st.CallbackFailures != created {
		t.Fatalf("callbacks of payouts awaiting their invoice: %d taken, %d refused; want all %d refused, to come again", st.Callbacks, st.CallbackFailures, created)
	}
	var rec sandbox.Record
	for _, r := range sb.Payouts() {
		if r.ExternalInvoiceRef == ref {
			rec = r
		}
	}
	db, err := sql.Open("sqlite", filepath.Join(u.dir, "payout-ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var verdict string
	if err := db.QueryRow(`SELECT verdict FROM callbacks WHERE invoice_no = ?`, rec.InvoiceNo).Scan(&verdict); err != nil || verdict != "not-yet-recorded" {
		t.Fatalf("the stored callback of %s: %q %v, want not-yet-recorded", rec.InvoiceNo, verdict, err)
	}

	if out, errOut, code := u.run("reconcile"); code != 0 && code != 4 {
		t.Fatalf("reconcile: exit %d: %s %s", code, out, errOut)
	}
	if out, _, _ := u.run("status", ref); !hasField(out, "payout_invoice_no", rec.InvoiceNo) || strings.Contains(out, "name at the bank") {
		t.Fatalf("status %s after reconcile: want its invoice number, and no bank's name yet:\n%s", ref, out)
	}

	// The service's next delivery of the same callback.
	if code := postCallback(t, receiver, sb.CallbackPayload(rec), "e2e-hash-key"); code != http.StatusOK {
		t.Fatalf("the delivery after reconcile: %d, want 200", code)
	}
	out, _, _ := u.run("status", ref)
	if !hasField(out, "name at the bank", otherName) || !hasField(out, "state", "SUCCEEDED") {
		t.Fatalf("status %s after the delivery: want SUCCEEDED with the bank's name %q:\n%s", ref, otherName, out)
	}
}

// postCallback signs payload with key as the service does, posts it to a receiver at url, and
// returns the answer's status.
func postCallback(tb testing.TB, url string, payload api.CallbackPayload, key string) int {
	tb.Helper()
	body, err := api.SignCallback(payload, []byte(key))
	if err != nil {
		tb.Fatal(err)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// hasField reports whether `payout status REF` printed the field with this value.
func hasField(status, field, value string) bool {
	return regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(field) + `:\s+` + regexp.QuoteMeta(value) + `$`).MatchString(status)
}
