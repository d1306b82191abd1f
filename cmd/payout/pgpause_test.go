package main_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/payout/payout/api/sandbox"
)

// TestPausedHostNeverPaysTwiceOnPostgres pauses a host right after it recorded a payout's
// intent and before it proved its claim and sent (the command's test seam stops the process
// there, as a VM is paused), ends its connections to the database (as the server ends the
// sessions of a host that stopped answering), lets another host take the file over and pay it,
// and then wakes the first one up, after a random pause, on a network that works again. The service, which counts every create, must
// see each reference created once: the woken host cannot prove its claim and sends nothing, and
// says so. The in-flight hold is set shorter than the pauses, so that the other host has sent
// the row again by the time the first wakes: only the proof before the POST stands between
// them. make crashtest-postgres tries 20 pauses of 1 s to 5 minutes.
func TestPausedHostNeverPaysTwiceOnPostgres(t *testing.T) {
	t.Parallel() // long, and mostly waiting on processes
	tries := envInt("PAYOUT_PAUSE_TRIES", 2)
	longest := time.Duration(envInt("PAYOUT_PAUSE_MAX_SECONDS", 8)) * time.Second
	f := newFleet(t, 7, sandbox.Faults{Latency: 5 * time.Millisecond, LatencyJitter: 20 * time.Millisecond})
	rng := rand.New(rand.NewPCG(7, 30))
	const rows = 12
	for try := 1; try <= tries; try++ {
		pause := time.Second + time.Duration(rng.Int64N(int64(longest-time.Second)+1))
		if try == 1 {
			pause = time.Second // the shortest: the other host is still waiting out the row's hold
		}
		prefix := fmt.Sprintf("PZ%d", try)
		file, _ := f.payFile(prefix+".csv", prefix, 40+try, rows)
		stopAt := prefix + "-00005"
		t.Logf("try %d: paused for %s after the intent of %s", try, pause.Round(time.Millisecond), stopAt)
		pausedHostTry(t, f, file, stopAt, pause)
		createdOnce(t, f.sb, prefix, rows)
	}
	if d := f.sb.Duplicates(); len(d) > 0 {
		t.Errorf("the service created twice: %v", d)
	}
	if out, errOut, code := f.run("audit", "verify"); code != 0 {
		t.Errorf("audit verify: exit %d: %s %s", code, out, errOut)
	}
}

// pausedHostTry is one try: host A pays file through a proxy and is stopped after the intent of
// stopAt; cut off, it stays stopped for pause while host B pays the file; then A wakes.
func pausedHostTry(t *testing.T, f *fleet, file, stopAt string, pause time.Duration) {
	t.Helper()
	proxy, viaProxy := newPGProxy(t, f.url)
	args := []string{"run", "--rate", "30", "--workers", "1", "--unknown-grace", "1s", "--in-flight-hold", "1s",
		"--report-dir", filepath.Join(f.dir, "reports"), file}
	a := exec.Command(binPath, append([]string{"run", "-v"}, args[1:]...)...)
	a.Dir = f.dir
	for _, kv := range f.env {
		if !strings.HasPrefix(kv, "PAYOUT_LEDGER=") {
			a.Env = append(a.Env, kv)
		}
	}
	a.Env = append(a.Env, "PAYOUT_LEDGER="+viaProxy, "PAYOUT_TEST_STOP_AFTER_INTENT="+stopAt)
	var aOut, aErr lockedBuffer
	a.Stdout, a.Stderr = &aOut, &aErr
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	aDone := make(chan error, 1)
	go func() { aDone <- a.Wait() }()
	waitFor(t, 60*time.Second, "host A to stop after the intent of "+stopAt, func() bool {
		select {
		case err := <-aDone:
			t.Fatalf("host A exited (%v) before it stopped: %s", err, aErr.String())
		default:
		}
		return processStopped(a.Process.Pid)
	})
	if n := f.sb.CreateCounts()[stopAt]; n != 0 {
		t.Fatalf("%s was created before host A stopped after its intent: the seam is in the wrong place", stopAt)
	}
	proxy.cut()
	woken := time.Now().Add(pause)

	bOut, bErr, bCode := make(chan string, 1), make(chan string, 1), make(chan int, 1)
	go func() {
		out, errOut, code := f.run(args...)
		bOut <- out
		bErr <- errOut
		bCode <- code
	}()
	time.Sleep(time.Until(woken)) // the pause itself: what is tested is what happens after it
	if err := a.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// Woken, A proves its claim before anything else: its session is gone, and the proof fails.
	// Everything else of it works again (the network is back): a turn of the rate limiter, say.
	select {
	case err := <-aDone:
		if code := exitCode(err); code != 1 {
			t.Errorf("host A exited %d after waking, want 1 (stopped, resumable): %s", code, aErr.String())
		}
	case <-time.After(2 * time.Minute):
		_ = a.Process.Kill()
		t.Fatalf("host A did not exit after waking: %s", aErr.String())
	}
	if !strings.Contains(aErr.String(), stopAt) || !strings.Contains(aErr.String(), "cannot prove it still holds its claims") {
		t.Errorf("host A's log does not say it did not send %s for want of its claim:\n%s", stopAt, aErr.String())
	}
	code := <-bCode
	if out, errOut := <-bOut, <-bErr; code != 0 {
		t.Errorf("host B: exit %d, want 0: %s %s", code, out, errOut)
	}
}

// lockedBuffer is a bytes.Buffer a process writes into while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// processStopped reports whether the process is stopped by a signal (state T in /proc).
func processStopped(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command's name, which is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(stat, ')')
	return i > 0 && len(stat) > i+2 && stat[i+2] == 'T'
}

// waitFor polls cond every 20 ms until it holds, or fails the test after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool, seen ...func() string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			var also []string
			for _, s := range seen {
				also = append(also, s())
			}
			t.Fatalf("waited %s for %s; %s", limit, what, strings.Join(also, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exitCode is a process's exit code from Wait's error.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}
