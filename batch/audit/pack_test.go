package audit_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch/audit"
	"github.com/payout/payout/batch/internal/batchtest"
)

// A signer plugged into Export signs the pack's bytes, and its signature lands beside the pack;
// a signer that fails leaves no pack.
func TestExportSignsThePackWithThePluggedSigner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := batchtest.NewHarness(t, sandbox.Options{})
	res := h.Run(ctx, batchtest.WritePayroll(t, h.Dir, "pay.csv", batchtest.Payroll(3, "SIG")), nil)
	out := filepath.Join(t.TempDir(), "pack.zip")
	sign := func(r io.Reader) ([]byte, error) {
		b, err := io.ReadAll(r)
		sum := sha256.Sum256(b)
		return []byte(hex.EncodeToString(sum[:])), err
	}
	if _, err := audit.Export(ctx, h.DB, audit.ExportOptions{RunID: res.RunID, Out: out, Actor: "ops@host", Now: time.Now(), Sign: sign}); err != nil {
		t.Fatal(err)
	}
	pack, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := os.ReadFile(out + audit.SignatureSuffix)
	sum := sha256.Sum256(pack)
	if err != nil || string(sig) != hex.EncodeToString(sum[:]) {
		t.Errorf("signature %q, %v; want the signer's output over the pack's bytes", sig, err)
	}

	failed := filepath.Join(t.TempDir(), "failed.zip")
	_, err = audit.Export(ctx, h.DB, audit.ExportOptions{RunID: res.RunID, Out: failed, Now: time.Now(),
		Sign: func(io.Reader) ([]byte, error) { return nil, errors.New("no key") }})
	if err == nil {
		t.Fatal("a pack whose signer failed was written")
	}
	if _, statErr := os.Stat(failed); !os.IsNotExist(statErr) {
		t.Errorf("a pack whose signer failed (%v) is left: %v", err, statErr)
	}
}
