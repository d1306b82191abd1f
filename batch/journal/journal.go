// Package journal keeps, on the host that sent them, the creates a process sent after it had
// lost its claim on their payouts: the one thing the ledger may not hold, since the process that
// lost its claim may have lost the database too, and the one thing a person must hear of, since
// the service may then hold the reference twice.
//
// A process proves its claim right before each POST (ledger.Fence), so a create leaves after the
// claim was lost only when the process was paused in the instant between its proof and its
// request. When its answer comes and the payout is no longer its own, the process says so at
// ERROR, notes it on the payout where the ledger allows, appends it here and stops; `payout
// reconcile` on this host reads the journal back and names every reference the service holds
// under two invoice numbers.
package journal

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// EnvPath names the journal file; by default $XDG_STATE_HOME/payout/late-sends.jsonl (or
// ~/.local/state/payout/late-sends.jsonl).
const EnvPath = "PAYOUT_JOURNAL"

// maxEntries bounds what Read holds: a journal is a handful of lines in a lifetime.
const maxEntries = 100_000

// Entry is one create sent after its process lost its claim, with what the ledger held then.
type Entry struct {
	At        time.Time `json:"at"`
	Ledger    string    `json:"ledger"` // the ledger's name, without a password
	Ref       string    `json:"external_invoice_ref"`
	SentBy    string    `json:"sent_by"`
	InvoiceNo string    `json:"payout_invoice_no,omitempty"` // what the service answered, if it did
	Status    string    `json:"transaction_status,omitempty"`
	Answer    string    `json:"answer,omitempty"` // the error, when the answer was one
	// LedgerState and LedgerInvoiceNo are the payout as the ledger held it when the answer came.
	LedgerState     string `json:"ledger_state,omitempty"`
	LedgerInvoiceNo string `json:"ledger_invoice_no,omitempty"`
}

// Path is the journal's file: $PAYOUT_JOURNAL, or the default under the user's state folder.
func Path(getenv func(string) string) (string, error) {
	if p := getenv(EnvPath); p != "" {
		return p, nil
	}
	state := getenv("XDG_STATE_HOME")
	if state == "" {
		home := getenv("HOME")
		if home == "" {
			return "", fmt.Errorf("no journal of late sends: set $%s, $XDG_STATE_HOME or $HOME", EnvPath)
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "payout", "late-sends.jsonl"), nil
}

// Append adds e to the journal at path, synced to disk before it returns; the file and its
// folder are the owner's alone.
func Append(path string, e Entry) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("journal of late sends: %w", err)
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("journal of late sends: %w", err)
	}
	_, werr := f.Write(append(line, '\n'))
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return fmt.Errorf("journal of late sends %s: %w", path, err)
	}
	return nil
}

// Read returns the journal's entries for the ledger named ledgerName ("" for all); a journal
// not there yet holds none. A line that is not an entry is an error naming it.
func Read(path, ledgerName string) ([]Entry, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal of late sends: %w", err)
	}
	defer f.Close()
	var out []Entry
	sc := bufio.NewScanner(io.LimitReader(f, 64<<20))
	for n := 1; sc.Scan(); n++ {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("journal of late sends %s, line %d: %v", path, n, err)
		}
		if ledgerName == "" || e.Ledger == ledgerName {
			out = append(out, e)
		}
		if len(out) > maxEntries {
			return nil, fmt.Errorf("journal of late sends %s: more than %d entries", path, maxEntries)
		}
	}
	return out, sc.Err()
}
