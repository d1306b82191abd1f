package main_test

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payout/payout/api"
	"github.com/payout/payout/ledger"
	"github.com/payout/payout/ledger/ledgertest"
)

// TestCommandCallbackReplayInANewEnvelopeIsCounted: a callback replayed in new envelopes
// (spaces, another field, the fields reordered, the token padded or in spaces, its signature's
// spare bits set) is counted as a replay on the first delivery's row, never stored again.
func TestCommandCallbackReplayInANewEnvelopeIsCounted(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	u := newUser(t, newSandbox(t))
	if _, errOut, code := u.run("run", samplePath(t)); code != 0 {
		t.Fatalf("run exit %d: %s", code, errOut)
	}
	ledgerPath := filepath.Join(u.dir, "payout-ledger.db")
	db, err := ledger.Open(t.Context(), ledgerPath, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	list := ledgertest.Payouts(t, db, ledger.Filter{})
	db.Close()
	if len(list) == 0 {
		t.Fatal("the ledger holds no payout")
	}
	p := list[0]

	cmd := exec.Command(binPath, "callbacks", "--listen", "127.0.0.1:0")
	cmd.Dir, cmd.Env = u.dir, append(append([]string(nil), u.env...), "PAYOUT_HASH_KEY=e2e-hash-key")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(stderr)
	var url string
	for url == "" && lines.Scan() {
		if _, rest, ok := strings.Cut(lines.Text(), "listening on "); ok {
			url, _, _ = strings.Cut(rest, " ")
		}
	}
	if url == "" {
		t.Fatal("callbacks did not say where it listens")
	}
	go func() {
		for lines.Scan() {
		}
	}()
	post := func(body []byte) string {
		t.Helper()
		resp, err := http.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var answer struct{ Message string }
		if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("callback answered %d %q: %v", resp.StatusCode, answer.Message, err)
		}
		return answer.Message
	}
	body, err := api.SignCallback(api.CallbackPayload{InvoiceNo: p.InvoiceNo, InvoiceStatusID: 2, InvoiceStatus: "SUCCESS",
		Amount: p.Amount, BankReferenceNo: "BR-1", BankResponseSuccess: true}, []byte("e2e-hash-key"))
	if err != nil {
		t.Fatal(err)
	}
	if got := post(body); got != "applied" {
		t.Fatalf("first delivery: %q, want applied", got)
	}
	again := rewrappedCallbacks(t, body)
	for _, b := range again {
		if got := post(b); got != "replay" {
			t.Errorf("re-wrapped replay %s: %q, want replay", b, got)
		}
	}
	sdb, err := sql.Open("sqlite", ledgerPath)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	var rows, replays int
	if err := sdb.QueryRow(`SELECT count(*), COALESCE(sum(replays), 0) FROM callbacks`).Scan(&rows, &replays); err != nil {
		t.Fatal(err)
	}
	if rows != 1 || replays != len(again) {
		t.Errorf("callbacks: %d stored, %d replays counted; want 1 stored, %d replays", rows, replays, len(again))
	}
	if out, errOut, code := u.run("audit", "verify"); code != 0 {
		t.Errorf("audit verify after the replays: exit %d: %s %s", code, out, errOut)
	}
}

// rewrappedCallbacks are the ways a replay of body can be re-sent without the hash key: other
// spacing, another field, the fields reordered, the token padded or in spaces, its signature
// segment's spare bits set. Each is a new body carrying the same signed token.
func rewrappedCallbacks(t *testing.T, body []byte) [][]byte {
	t.Helper()
	var w struct{ Data string }
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatal(err)
	}
	token := w.Data
	signed, sig, _ := strings.Cut(token, ".")
	claims, sig, _ := strings.Cut(sig, ".")
	signed += "." + claims
	// An HS256 signature is 32 bytes, 43 characters in base64url: the last one carries two
	// bits that decoding drops.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	spare := sig[:len(sig)-1] + string(alphabet[strings.IndexByte(alphabet, sig[len(sig)-1])|1])
	var out [][]byte
	for _, f := range []string{`{ "data" : %q , "response_code" : 2100 }`, `{"data":%q,"response_code":2100,"note":"again"}`,
		`{"response_code":"2100","data":%q}`} {
		out = append(out, fmt.Appendf(nil, f, token))
	}
	for _, tok := range []string{signed + "." + sig + "=", " " + token + " ", signed + "." + spare} {
		out = append(out, fmt.Appendf(nil, `{"data":%q,"response_code":2100}`, tok))
	}
	return out
}
