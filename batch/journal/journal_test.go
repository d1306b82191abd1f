package journal_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/payout/payout/batch/journal"
)

// TestJournalKeepsLateSendsOfEachLedger: entries appended are read back for their ledger only,
// from a file and folder that are the owner's alone; a missing journal holds none.
func TestJournalKeepsLateSendsOfEachLedger(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home}
	path, err := journal.Path(func(k string) string { return env[k] })
	if err != nil || path != filepath.Join(home, ".local", "state", "payout", "late-sends.jsonl") {
		t.Fatalf("default path %q (%v)", path, err)
	}
	if entries, err := journal.Read(path, ""); err != nil || len(entries) != 0 {
		t.Fatalf("a journal not there yet: %v %v", entries, err)
	}
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	twice := journal.Entry{At: at, Ledger: "postgres://db/payout", Ref: "A-1", SentBy: "host=a", InvoiceNo: "N2", LedgerInvoiceNo: "N1"}
	once := journal.Entry{At: at, Ledger: "postgres://db/payout", Ref: "A-2", SentBy: "host=a", InvoiceNo: "N3", LedgerInvoiceNo: "N3"}
	other := journal.Entry{At: at, Ledger: "/srv/other.db", Ref: "B-1", SentBy: "host=a", Answer: "timeout"}
	for _, e := range []journal.Entry{twice, once, other} {
		if err := journal.Append(path, e); err != nil {
			t.Fatal(err)
		}
	}
	got, err := journal.Read(path, "postgres://db/payout")
	if err != nil || len(got) != 2 || got[0].Ref != "A-1" || got[1].Ref != "A-2" {
		t.Fatalf("entries of the ledger: %+v (%v)", got, err)
	}
	if got[0].InvoiceNo != "N2" || got[0].LedgerInvoiceNo != "N1" {
		t.Errorf("the first entry lost its invoice numbers: %+v", got[0])
	}
	for _, p := range []string{path, filepath.Dir(path)} {
		info, err := os.Stat(p)
		if err != nil || info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: %v (%v), want the owner's alone", p, info.Mode().Perm(), err)
		}
	}
	if _, err := journal.Path(func(string) string { return "" }); err == nil {
		t.Error("no HOME, no XDG_STATE_HOME, no PAYOUT_JOURNAL: want an error")
	}
}
