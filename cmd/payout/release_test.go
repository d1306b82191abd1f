package main_test

import (
	"context"
	"fmt"
	"os"
	osuser "os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/ledger"
	"github.com/payout/payout/ledger/ledgertest"
)

// TestCommandReleaseStuckPayout: `payout status` says how to free a stuck payout, and `payout
// release REF --reason TEXT` makes it READY, naming who did it, or refuses with exit 2.
func TestCommandReleaseStuckPayout(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	u := newUser(t, newSandbox(t))
	if out, errOut, code := u.run("run", samplePath(t)); code != 0 {
		t.Fatalf("run exit %d: %s %s", code, out, errOut)
	}
	accepted := stickPayout(t, filepath.Join(u.dir, "payout-ledger.db"), "STUCK-1")

	// Its file run again: the row is looked up, not found, and not sent; the summary says so.
	stuckFile := filepath.Join(u.dir, "stuck.csv")
	if err := os.WriteFile(stuckFile, []byte("external_invoice_ref,recipient_reference,payout_service_id,third_party_account_no,amount\n"+
		"STUCK-1,Stuck,1,0123456789,10.00\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := outcome.StuckMessage("STUCK-1", outcome.MaxSendAttempts)
	if out, errOut, code := u.run("run", stuckFile); code != 4 || !strings.Contains(out, want) {
		t.Errorf("run of the stuck row's file: exit %d, want 4 and %q in:\n%s%s", code, want, out, errOut)
	}

	out, _, code := u.run("status", "STUCK-1")
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("status of a stuck payout: exit %d, want %q in:\n%s", code, want, out)
	}
	for _, args := range [][]string{
		{"release", "STUCK-1"},
		{"release", "NOT-IN-LEDGER", "--reason", "checked"},
		{"release", accepted, "--reason", "checked"},
	} {
		if _, errOut, code := u.run(args...); code != 2 || !strings.Contains(errOut, "release") {
			t.Errorf("%v: exit %d, stderr %q; want 2", args, code, errOut)
		}
	}
	out, errOut, code := u.run("release", "STUCK-1", "--reason", "support ticket 42: no such payout")
	if code != 0 || !strings.Contains(out, "released STUCK-1") || !strings.Contains(out, "up to 5 more times before it is stuck again") {
		t.Fatalf("release exit %d: %s %s", code, out, errOut)
	}
	me, err := osuser.Current()
	if err != nil {
		t.Fatal(err)
	}
	out, _, _ = u.run("status", "STUCK-1")
	if !strings.Contains(out, "READY") || !strings.Contains(out, "released by "+me.Username+"@") || !strings.Contains(out, "support ticket 42") {
		t.Errorf("status after the release:\n%s", out)
	}
	if _, _, code := u.run("release", "STUCK-1", "--reason", "again"); code != 2 {
		t.Errorf("second release: exit %d, want 2", code)
	}
	if out, errOut, code := u.run("run", stuckFile); code != 0 {
		t.Errorf("run after the release: exit %d:\n%s%s", code, out, errOut)
	}
	if out, _, _ := u.run("status", "STUCK-1"); !strings.Contains(out, "SUBMITTED") {
		t.Errorf("status after the run:\n%s", out)
	}
}

// stickPayout records ref as a payout sent outcome.MaxSendAttempts times with no answer (it never
// reached the sandbox), and returns a payout of the ledger the service accepted.
func stickPayout(t *testing.T, path, ref string) string {
	t.Helper()
	ctx := context.Background()
	db, err := ledger.Open(ctx, path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.AddRun(ctx, ledger.Run{ID: "stuck-run", Kind: "run", File: "stuck.csv", StartedAt: time.Now(), Status: "finished"}); err != nil {
		t.Fatal(err)
	}
	p := ledger.Payout{Ref: ref, Line: 2, Recipient: "Stuck", ProviderID: 1, Bank: "Maybank", Account: "0123456789", Amount: decimal.New(1000, -2)}
	if err := db.Record(ctx, "stuck-run", nil, []ledger.Payout{p}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < outcome.MaxSendAttempts; i++ {
		changes := []ledger.Change{{Ref: ref, From: ledger.Ready, To: ledger.Submitting, Detail: "test: intent"},
			{Ref: ref, From: ledger.Submitting, To: ledger.Unknown, CountAttempt: true, Detail: fmt.Sprintf("test: no answer %d", i+1)}}
		if i < outcome.MaxSendAttempts-1 {
			changes = append(changes, ledger.Change{Ref: ref, From: ledger.Unknown, To: ledger.Ready, Detail: "test: not found"})
		}
		if err := db.Apply(ctx, changes...); err != nil {
			t.Fatal(err)
		}
	}
	list := ledgertest.Payouts(t, db, ledger.Filter{States: []ledger.State{ledger.Submitted, ledger.Succeeded}})
	if len(list) == 0 {
		t.Fatal("no accepted payout")
	}
	return list[0].Ref
}
