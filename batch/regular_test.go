package batch_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/batch/read"
)

// TestRunRefusesWhatIsNotARegularFile: the run itself, not only the command line, refuses a FIFO
// (whose open would block) and a device (which never ends), as the input's fault, sending nothing.
func TestRunRefusesWhatIsNotARegularFile(t *testing.T) {
	t.Parallel()
	h := batchtest.NewHarness(t, sandbox.Options{})
	fifo := filepath.Join(h.Dir, "pipe.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(h.Dir, "zero.csv")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, zero} {
		done := make(chan error, 1)
		go func() {
			_, err := batch.NewRunner(h.Cfg).Run(context.Background(), path)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, read.ErrNotRegular) || exitcode.OfError(err) != exitcode.Rejected {
				t.Errorf("%s: %v (exit %d), want it refused as not a regular file, exit 3", path, err, exitcode.OfError(err))
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: the run is still reading it after 30 s", path)
		}
	}
	if n := h.Sandbox.Stats().Creates; n != 0 {
		t.Errorf("%d creates, want none", n)
	}
}
