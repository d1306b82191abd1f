package batch_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/intake"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/ledger"
)

// TestFileChangedBetweenPassesStopsBeforeTheChangedChunk: an amount rewritten in place after the
// survey validated the file, while the first chunks are paid, stops the run before the changed
// chunk is recorded: that row is never sent with an amount nobody validated.
func TestFileChangedBetweenPassesStopsBeforeTheChangedChunk(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := batchtest.NewHarness(t, sandbox.Options{})
	// 450 rows of 200 bytes: the last chunks lie beyond what the reader has buffered when the
	// first chunk is paid.
	rows := batchtest.Payroll(450, "CHG")
	var b strings.Builder
	b.WriteString("external_invoice_ref,recipient_reference,bank,third_party_account_no,amount,payment_description\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%s,%s,%s,%s,%s,%s\n", r.Ref, r.Name, r.Bank, r.Account, r.Amount, strings.Repeat("Gaji November ", 9))
	}
	path := filepath.Join(h.Dir, "changed.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	last := rows[len(rows)-1]
	var once sync.Once
	res := h.Run(ctx, path, func(c *batch.Config) {
		c.ChunkRows = 20
		c.Progress = func(int, int) {
			once.Do(func() {
				data, err := os.ReadFile(path)
				if err != nil {
					t.Error(err)
					return
				}
				// The same length, another amount: only the digest of its chunk tells.
				i := bytes.LastIndex(data, []byte(","+last.Amount+","))
				data[i+1] = '9'
				if err := os.WriteFile(path, data, 0o600); err != nil {
					t.Error(err)
				}
			})
		}
	})
	if res.ExitCode != exitcode.Aborted || !bytes.Contains([]byte(res.Aborted), []byte(intake.ErrFileChanged.Error())) {
		t.Fatalf("result %+v, want the run aborted because the file changed", res)
	}
	if n := h.Sandbox.CreateCounts()[last.Ref]; n != 0 {
		t.Errorf("%s, changed after validation, was sent %d times", last.Ref, n)
	}
	if _, err := h.DB.Get(ctx, last.Ref); err == nil {
		t.Errorf("%s, changed after validation, was recorded", last.Ref)
	} else if !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("get %s: %v", last.Ref, err)
	}
}
