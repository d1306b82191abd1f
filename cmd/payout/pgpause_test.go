package main_test

import (
	"bytes"
	"fmt"
	"io"
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
	a := startPausedHost(t, f, file, "PAYOUT_TEST_STOP_AFTER_INTENT", stopAt, pause)
	// Woken, A proves its claim before anything else: its session is gone, and the proof fails.
	// Everything else of it works again (the network is back): a turn of the rate limiter, say.
	if code := a.wait(t); code != 1 {
		t.Errorf("host A exited %d after waking, want 1 (stopped, resumable): %s", code, a.stderr.String())
	}
	if !strings.Contains(a.stderr.String(), stopAt) || !strings.Contains(a.stderr.String(), "cannot prove it still holds its claims") {
		t.Errorf("host A's log does not say it did not send %s for want of its claim:\n%s", stopAt, a.stderr.String())
	}
	if strings.Contains(a.stderr.String(), "close ledger") {
		t.Errorf("host A's log repeats, closing, that its connections are gone:\n%s", a.stderr.String())
	}
}

// TestLateSendIsNeverSilentOnPostgres pauses a host in the one place no proof can cover: after
// it proved its claim and took its turn, right before its POST. Cut off meanwhile, it is taken
// for gone; another host pays the file (the in-flight hold set short, as an operator could), and
// the first one's POST leaves when it wakes: the service holds the reference twice. That must
// never be silent: the late host says DUPLICATE at ERROR and exits 1, keeps it in its journal,
// notes it on the payout, and `payout reconcile` names it and exits 4.
func TestLateSendIsNeverSilentOnPostgres(t *testing.T) {
	t.Parallel()
	f := newFleet(t, 11, sandbox.Faults{Latency: 5 * time.Millisecond})
	const rows = 8
	file, _ := f.payFile("LT.csv", "LT", 61, rows)
	stopAt := "LT-00004"
	a := startPausedHost(t, f, file, "PAYOUT_TEST_STOP_BEFORE_POST", stopAt, 4*time.Second)
	code := a.wait(t)
	if n := f.sb.CreateCounts()[stopAt]; n != 2 {
		t.Fatalf("the service created %s %d times: the test did not make the late send it is about", stopAt, n)
	}
	if code != 1 || !strings.Contains(a.stderr.String(), "DUPLICATE") {
		t.Errorf("host A exited %d; its log does not say DUPLICATE:\n%s", code, a.stderr.String())
	}
	entries, err := os.ReadFile(filepath.Join(f.dir, ".local", "state", "payout", "late-sends.jsonl"))
	if err != nil || !strings.Contains(string(entries), `"external_invoice_ref":"`+stopAt+`"`) {
		t.Errorf("the journal of late sends does not hold %s (%v): %s", stopAt, err, entries)
	}
	out, errOut, rc := a.run(t, "reconcile", "--report-dir", filepath.Join(f.dir, "reports"))
	if rc != 4 || !strings.Contains(errOut, "DUPLICATE at the service: "+stopAt) {
		t.Errorf("reconcile: exit %d, want 4 naming %s as held twice: %s %s", rc, stopAt, out, errOut)
	}
	status, _, _ := f.run("status", stopAt)
	if !strings.Contains(status, "DUPLICATE") {
		t.Errorf("payout status %s does not show the second create:\n%s", stopAt, status)
	}
	createdOnceBut(t, f.sb, "LT", rows, stopAt)
}

// pausedHost is host A of a pause test: a run through its own proxy to the ledger.
type pausedHost struct {
	cmd    *exec.Cmd
	env    []string
	dir    string
	stderr lockedBuffer
	done   chan error
}

// startPausedHost starts host A on file through a proxy, its seam seam stopping it at stopAt;
// once stopped, ends its connections to the database (the server took it for gone), starts host
// B on the same file, and wakes A after pause, once B has finished or pause is over, whichever is
// later. It returns A, awake.
func startPausedHost(t *testing.T, f *fleet, file, seam, stopAt string, pause time.Duration) *pausedHost {
	t.Helper()
	proxy, viaProxy := newPGProxy(t, f.url)
	args := []string{"--rate", "30", "--workers", "1", "--unknown-grace", "1s", "--in-flight-hold", "1s",
		"--report-dir", filepath.Join(f.dir, "reports"), file}
	a := &pausedHost{dir: f.dir, done: make(chan error, 1)}
	for _, kv := range f.env {
		if !strings.HasPrefix(kv, "PAYOUT_LEDGER=") {
			a.env = append(a.env, kv)
		}
	}
	a.env = append(a.env, "PAYOUT_LEDGER="+viaProxy)
	a.cmd = exec.Command(binPath, append([]string{"run", "-v"}, args...)...)
	a.cmd.Dir, a.cmd.Env = f.dir, append(append([]string(nil), a.env...), seam+"="+stopAt)
	a.cmd.Stdout, a.cmd.Stderr = io.Discard, &a.stderr
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { a.done <- a.cmd.Wait() }()
	waitFor(t, 60*time.Second, "host A to stop at "+stopAt, func() bool {
		select {
		case err := <-a.done:
			t.Fatalf("host A exited (%v) before it stopped: %s", err, a.stderr.String())
		default:
		}
		return processStopped(a.cmd.Process.Pid)
	})
	if n := f.sb.CreateCounts()[stopAt]; n != 0 {
		t.Fatalf("%s was created before host A stopped: the seam is in the wrong place", stopAt)
	}
	proxy.cut()
	woken := time.Now().Add(pause)
	out, errOut, code := f.run(append([]string{"run"}, args...)...)
	if code != 0 {
		t.Errorf("host B: exit %d, want 0: %s %s", code, out, errOut)
	}
	time.Sleep(time.Until(woken)) // the rest of the pause: what is tested is what happens after it
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	return a
}

// wait waits for host A's exit and returns its code.
func (a *pausedHost) wait(t *testing.T) int {
	t.Helper()
	select {
	case err := <-a.done:
		return exitCode(err)
	case <-time.After(2 * time.Minute):
		_ = a.cmd.Process.Kill()
		t.Fatalf("host A did not exit after waking: %s", a.stderr.String())
	}
	return -1
}

// run runs another command on host A: its environment (its journal, its way to the ledger).
func (a *pausedHost) run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir, cmd.Env = a.dir, a.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), exitCode(err)
}

// createdOnceBut checks that every row of the file was created once at the service, but the
// reference twice, which was created twice.
func createdOnceBut(t *testing.T, sb *sandbox.Server, prefix string, rows int, twice string) {
	t.Helper()
	counts := sb.CreateCounts()
	for i := 1; i <= rows; i++ {
		ref := fmt.Sprintf("%s-%05d", prefix, i)
		want := 1
		if ref == twice {
			want = 2
		}
		if counts[ref] != want {
			t.Errorf("the service created %s %d times, want %d", ref, counts[ref], want)
		}
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
