package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/ledger"
	"github.com/payout/payout/ledger/ledgertest"
)

var binPath string

func TestMain(m *testing.M) {
	if code, ok := rawReaderMain(); ok {
		os.Exit(code)
	}
	dir, err := os.MkdirTemp("", "payout-bin-")
	if err != nil {
		panic(err)
	}
	binPath = filepath.Join(dir, "payout")
	// With the tests' seams (testhooks_on.go), which a release build lacks.
	build := exec.Command("go", "build", "-tags", "payout_testhooks", "-o", binPath, ".")
	if out, err := build.CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// user runs the command as a person or cron would: a binary, a working folder, an environment.
type user struct {
	tb  testing.TB
	dir string
	env []string
}

// newUser is a user whose working folder holds a ledger made by `payout init`.
func newUser(tb testing.TB, sb *sandbox.Server) *user {
	tb.Helper()
	u := newUserWithoutLedger(tb, sb)
	if out, errOut, code := u.run("init"); code != 0 {
		tb.Fatalf("init exit %d: %s %s", code, out, errOut)
	}
	return u
}

// newUserWithoutLedger is a user who never ran `payout init`.
func newUserWithoutLedger(tb testing.TB, sb *sandbox.Server) *user {
	tb.Helper()
	ts := httptest.NewServer(sb)
	tb.Cleanup(ts.Close)
	dir := tb.TempDir()
	return &user{tb: tb, dir: dir, env: []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir,
		"PAYOUT_BASE_URL=" + ts.URL, "PAYOUT_AUTH_TOKEN=e2e-token", "PAYOUT_VIRTUAL_POOL_REF=POOL-E2E",
		"PAYOUT_CALLBACK_URL=http://127.0.0.1:1/callback", "PAYOUT_REDIRECT_URL=http://127.0.0.1:1/return",
		"PAYOUT_RATE=100", "PAYOUT_WORKERS=8",
	}}
}

// newSandbox is the service as users meet it: every request answered in 5-20 ms. Users pay at
// --rate 100 with 8 workers (newUser).
func newSandbox(tb testing.TB) *sandbox.Server {
	sb := sandbox.New(sandbox.Options{AuthToken: "e2e-token", HashKey: []byte("e2e-hash-key"),
		Faults: sandbox.Faults{Latency: 5 * time.Millisecond, LatencyJitter: 15 * time.Millisecond}})
	tb.Cleanup(sb.Close)
	return sb
}

// run runs the binary and returns stdout, stderr and the exit code.
func (u *user) run(args ...string) (string, string, int) {
	u.tb.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir, cmd.Env = u.dir, u.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		u.tb.Fatalf("payout %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), code
}

func samplePath(tb testing.TB) string {
	tb.Helper()
	p, err := filepath.Abs("../../testdata/sample-payroll.csv")
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestCommandRunAsAUser(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	u := newUser(t, sb)
	sample := samplePath(t)

	out, errOut, code := u.run("run", "--dry-run", "--json", sample)
	if code != 0 {
		t.Fatalf("dry run exit %d: %s %s", code, out, errOut)
	}
	if n := sb.Stats().Creates; n != 0 {
		t.Fatalf("dry run sent %d creates", n)
	}

	out, errOut, code = u.run("run", "--json", sample)
	if code != 0 {
		t.Fatalf("run exit %d: %s %s", code, out, errOut)
	}
	var summary map[string]any
	if err := json.Unmarshal([]byte(out), &summary); err != nil {
		t.Fatalf("--json printed %q: %v", out, err)
	}
	for _, key := range []string{"run_id", "file", "rows", "rejected", "submitted", "succeeded", "pending", "failed",
		"unknown", "skipped", "total_amount", "reports"} {
		if _, ok := summary[key]; !ok {
			t.Errorf("--json lacks %q: %s", key, out)
		}
	}
	if summary["rows"] != float64(50) || summary["submitted"] != float64(50) {
		t.Errorf("summary %s, want 50 rows submitted", out)
	}
	if total, ok := summary["total_amount"].(string); !ok || !strings.Contains(total, ".") {
		t.Errorf("total_amount %v, want a decimal string", summary["total_amount"])
	}
	if quiet := withoutSizingAdvice(errOut); quiet != "" {
		t.Errorf("a successful run is quiet on stderr, got %q", quiet)
	}

	// A rerun sends nothing.
	out, _, code = u.run("run", "--json", "--metrics-file", "payout.prom", sample)
	if code != 0 || !strings.Contains(out, `"skipped":50`) {
		t.Errorf("rerun exit %d: %s", code, out)
	}
	metrics, err := os.ReadFile(filepath.Join(u.dir, "payout.prom"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`payout_run_rows{state="pending"} 50`, `payout_run_skipped_rows 50`,
		`payout_ledger_amount_myr{state="SUBMITTED"} 302279.94`, "payout_run_duration_seconds ", "payout_run_last_success_timestamp_seconds "} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics file lacks %q:\n%s", want, metrics)
		}
	}
	if n := sb.Stats().Creates; n != 50 {
		t.Errorf("service saw %d creates, want 50", n)
	}

	out, _, code = u.run("status")
	if code != 0 || !strings.Contains(out, "SUBMITTED") {
		t.Errorf("status exit %d: %s", code, out)
	}
	runID, _ := summary["run_id"].(string)
	out, _, code = u.run("report", "--report-dir", "again", runID)
	if code != 0 || !strings.Contains(out, ".result.csv") {
		t.Errorf("report exit %d: %s", code, out)
	}
}

func TestCommandStatusShowsHistory(t *testing.T) {
	t.Parallel() // a ledger, a sandbox and folders of its own
	u := newUser(t, newSandbox(t))
	if out, errOut, code := u.run("run", samplePath(t)); code != 0 {
		t.Fatalf("run exit %d: %s %s", code, out, errOut)
	}
	db, err := ledger.Open(t.Context(), filepath.Join(u.dir, "payout-ledger.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	list := ledgertest.Payouts(t, db, ledger.Filter{})
	db.Close()
	if len(list) == 0 {
		t.Fatal("ledger: no payouts")
	}
	out, _, code := u.run("status", list[0].Ref)
	if code != 0 || !strings.Contains(out, "READY -> SUBMITTING") || !strings.Contains(out, "SUBMITTING -> SUBMITTED") {
		t.Errorf("status REF exit %d:\n%s", code, out)
	}
	if strings.Contains(out, list[0].Account) {
		t.Errorf("status shows the whole account number:\n%s", out)
	}
	if _, errOut, code := u.run("status", "NEVER-SENT-1"); code != 2 || !strings.Contains(errOut, "nothing was ever sent for it") {
		t.Errorf("status of a reference never sent: exit %d, stderr %q", code, errOut)
	}
}

func TestCommandErrors(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	u := newUser(t, sb)
	sample := samplePath(t)

	t.Run("wrong token is one line that never echoes it", func(t *testing.T) {
		bad := &user{tb: t, dir: u.dir, env: append(append([]string(nil), u.env...), "PAYOUT_AUTH_TOKEN=s3cret-wrong-token")}
		_, errOut, code := bad.run("providers")
		if code == 0 || strings.Contains(errOut, "s3cret-wrong-token") || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
		if strings.Count(errOut, "list providers") != 1 || !strings.Contains(errOut, "refused the auth token (HTTP 401") ||
			!strings.Contains(errOut, "check PAYOUT_AUTH_TOKEN / PAYOUT_AUTH_TOKEN_FILE") {
			t.Errorf("stderr %q, want one \"list providers\", the refusal and what to check", errOut)
		}
	})
	t.Run("a refused token says to correct it, not only to run again", func(t *testing.T) {
		bad := &user{tb: t, dir: u.dir, env: append(append([]string(nil), u.env...), "PAYOUT_AUTH_TOKEN=s3cret-wrong-token")}
		_, errOut, code := bad.run("run", sample)
		if code != 1 || !strings.Contains(errOut, "check PAYOUT_AUTH_TOKEN") || !strings.Contains(errOut, "once the token is right") ||
			strings.Contains(errOut, "run again to resume") {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
	})
	t.Run("missing configuration is exit 2", func(t *testing.T) {
		bare := &user{tb: t, dir: u.dir, env: []string{"PATH=" + os.Getenv("PATH")}}
		_, errOut, code := bare.run("run", sample)
		if code != 2 || !strings.Contains(errOut, "PAYOUT_BASE_URL") {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
	})
	t.Run("unknown flag is exit 2", func(t *testing.T) {
		if _, _, code := u.run("run", "--no-such-flag", sample); code != 2 {
			t.Errorf("exit %d", code)
		}
	})
	t.Run("a missing file stops the run", func(t *testing.T) {
		if _, errOut, code := u.run("run", filepath.Join(u.dir, "nope.csv")); code == 0 || !strings.Contains(errOut, "nope.csv") {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
	})
	t.Run("a second process on the same ledger waits, then exits 1 naming the holder", func(t *testing.T) {
		lock, err := ledger.Take(context.Background(), filepath.Join(u.dir, "payout-ledger.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer lock.Close()
		_, errOut, code := u.run("run", "--ledger-wait", "300ms", sample)
		if code != 1 || !strings.Contains(errOut, "pid=") || !strings.Contains(errOut, "after waiting 300ms") {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
	})
	if n := sb.Stats().Creates; n != 0 {
		t.Errorf("failed commands sent %d creates", n)
	}
}

func TestCommandProvidersAndTemplate(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	out, _, code := u.run("providers")
	if code != 0 || !strings.Contains(out, "Maybank") && !strings.Contains(out, "Malayan Banking") {
		t.Errorf("providers exit %d:\n%s", code, out)
	}
	out, _, code = u.run("providers", "--json")
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || len(list) == 0 {
		t.Errorf("providers --json exit %d, %v: %s", code, err, out)
	}
	out, _, code = u.run("template")
	if code != 0 || !strings.HasPrefix(strings.ToLower(out), "external_invoice_ref") {
		t.Errorf("template exit %d: %q", code, out)
	}
	if _, errOut, code := u.run("template", "--xlsx", "--out", "t.xlsx"); code != 0 {
		t.Errorf("template --xlsx exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(u.dir, "t.xlsx")); err != nil {
		t.Error(err)
	}
}

// TestCommandDemo runs the demo as a first-time user would, from a folder of their own: it must
// leave that folder alone, print absolute paths to reports that exist, and its report's File must
// name an input that is still there.
func TestCommandDemo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tmp := t.TempDir()
	cmd := exec.Command(binPath, "demo")
	cmd.Dir, cmd.Env = dir, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + tmp}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("demo wrote %v into the folder it was run from; want nothing there", entries)
	}
	var reports []string
	for _, line := range strings.Split(string(out), "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "report: "); ok {
			reports = append(reports, p)
		}
	}
	if len(reports) != 6 {
		t.Fatalf("demo printed %d report paths, want 6 (the run's and reconcile's):\n%s", len(reports), out)
	}
	for _, p := range reports {
		if !filepath.IsAbs(p) || !strings.HasPrefix(p, tmp) {
			t.Errorf("demo printed %s: want an absolute path in its own temporary folder under %s", p, tmp)
		}
		if _, err := os.Stat(p); err != nil {
			t.Errorf("demo printed a report that is not there: %v", err)
		}
	}
	html, err := os.ReadFile(reports[2])
	if err != nil || !strings.HasSuffix(reports[2], ".report.html") {
		t.Fatalf("the run's HTML report %s: %v", reports[2], err)
	}
	m := regexp.MustCompile(`File</th><td>([^<]+)<`).FindSubmatch(html)
	if m == nil {
		t.Fatalf("the run's report names no File:\n%s", html)
	}
	if _, err := os.Stat(string(m[1])); err != nil {
		t.Errorf("the report's File names an input that is gone: %v", err)
	}
	if !strings.Contains(string(out), "demo folder (input, ledger, reports): "+tmp) {
		t.Errorf("demo did not say where its folder is:\n%s", out)
	}
}

// withoutSizingAdvice is stderr less the pool's advice to raise --workers, which a loaded
// machine's latency may rightly bring about in any run.
func withoutSizingAdvice(stderr string) string {
	var kept []string
	for _, line := range strings.SplitAfter(stderr, "\n") {
		if !strings.Contains(line, "workers can send at most") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "")
}
