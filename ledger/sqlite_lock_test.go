package ledger_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/ledger"
)

// holderEnv makes the test binary a lock holder (see TestMain) for the killed-holder test.
const holderEnv = "LEDGER_TEST_LOCK_HOLDER"

func TestMain(m *testing.M) {
	if url := os.Getenv(pgHolderEnv); url != "" {
		runPgHolder(url)
	}
	if path := os.Getenv(holderEnv); path != "" {
		if _, err := ledger.Lock(path); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		select {} // hold it until killed
	}
	os.Exit(m.Run())
}

func TestLockIsExclusiveAndNamesTheHolder(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ledger.Lock(path)
	if !errors.Is(err, ledger.ErrLocked) {
		t.Fatalf("second lock: %v, want ErrLocked", err)
	}
	if want := fmt.Sprintf("(pid=%d ", os.Getpid()); !strings.Contains(err.Error(), want) {
		t.Errorf("message %q: want it to name the holder, %q", err, want)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = ledger.Lock(path)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	l.Close()
	if fi, err := os.Stat(path + ".lock"); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("lock file: %v %v", fi, err)
	}
}

func TestLockOfAKilledProcessDoesNotBlock(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ledger.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holderEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("child said %q, %v", line, err)
	}
	_, err = ledger.Lock(path)
	if want := fmt.Sprintf("pid=%d ", cmd.Process.Pid); !errors.Is(err, ledger.ErrLocked) || !strings.Contains(err.Error(), want) {
		t.Fatalf("while the child holds it: %v, want ErrLocked naming %q", err, want)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no chance to clean up
		t.Fatal(err)
	}
	cmd.Wait()
	l, err := ledger.Lock(path)
	if err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	l.Close()
}

// TestTakeWithinWaitsForTheHolder: a ledger whose lock another holder keeps is taken once the
// holder lets it go, within the wait; a wait that runs out says how long it waited.
func TestTakeWithinWaitsForTheHolder(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ledger.db")
	held, err := ledger.Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ledger.TakeWithin(context.Background(), path, 50*time.Millisecond, nil)
	if !errors.Is(err, ledger.ErrLocked) || !strings.Contains(err.Error(), "after waiting 50ms") {
		t.Fatalf("TakeWithin of a held lock: %v, want ErrLocked after waiting 50ms", err)
	}
	waiting := make(chan string, 1)
	got := make(chan error, 1)
	go func() {
		h, err := ledger.TakeWithin(context.Background(), path, time.Minute, func(holder string) { waiting <- holder })
		if err == nil {
			err = h.Close()
		}
		got <- err
	}()
	if holder := <-waiting; !strings.Contains(holder, "pid=") {
		t.Errorf("waiting was told the holder %q, want its note", holder)
	}
	if err := held.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Errorf("TakeWithin after the holder let go: %v", err)
	}
}
