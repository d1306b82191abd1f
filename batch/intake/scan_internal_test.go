package intake

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/ledger"
)

// each hands over every row once, in line order and as read, whatever the chunk size, while the
// next chunk is read ahead into the other buffer; a chunk's rows stay as they were handed over
// until fn returns.
func TestEachHandsOverEveryRowOnceAsRead(t *testing.T) {
	const n = 10
	var b strings.Builder
	b.WriteString("external_invoice_ref,recipient_reference,bank,third_party_account_no,amount,payment_description\n")
	for i := range n {
		fmt.Fprintf(&b, "REF-%d,Name %d,Example Bank,%010d,%d.00,Salary\n", i, i, i, i+1)
	}
	path := filepath.Join(t.TempDir(), "rows.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, chunk := range []int{1, 2, 3, 7, n, 100} {
		s := fileScan{path: path, chunk: chunk}
		var got []string
		_, err := s.each(context.Background(), func(rows []fileRow, _ map[string]ledger.Payout) error {
			if len(rows) == 0 || len(rows) > chunk {
				t.Errorf("chunk of %d: %d rows handed over", chunk, len(rows))
			}
			before := make([]read.Row, len(rows))
			for i := range rows {
				before[i] = rows[i].raw
				got = append(got, fmt.Sprintf("%d %s", rows[i].raw.Line, rows[i].raw.Ref))
			}
			for i := range rows {
				if r := rows[i].raw; r.Line != before[i].Line || r.Ref != before[i].Ref || r.Account != before[i].Account {
					t.Errorf("chunk of %d: line %d changed while fn held it: %+v", chunk, before[i].Line, r)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("chunk of %d: %v", chunk, err)
		}
		if len(got) != n {
			t.Fatalf("chunk of %d: %d rows handed over, want %d: %v", chunk, len(got), n, got)
		}
		for i, g := range got {
			if want := fmt.Sprintf("%d REF-%d", i+2, i); g != want {
				t.Errorf("chunk of %d: row %d is %q, want %q", chunk, i, g, want)
			}
		}

		// fn's error ends the pass at once: no chunk after it is handed over.
		stop := errors.New("stop here")
		calls := 0
		_, err = s.each(context.Background(), func([]fileRow, map[string]ledger.Payout) error {
			calls++
			return stop
		})
		if !errors.Is(err, stop) || calls != 1 {
			t.Errorf("chunk of %d: fn failing: %v after %d calls, want its error after one", chunk, err, calls)
		}
	}
}
