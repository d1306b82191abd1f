package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runWithin runs the binary like run, but kills it after limit: a command that hangs fails the
// test instead of hanging it.
func (u *user) runWithin(limit time.Duration, args ...string) (string, string, int) {
	u.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Dir, cmd.Env = u.dir, u.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		u.tb.Fatalf("payout %v did not finish within %s: stdout %q, stderr %q", args, limit, stdout.String(), stderr.String())
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return stdout.String(), stderr.String(), exit.ExitCode()
	}
	if err != nil {
		u.tb.Fatalf("payout %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), 0
}

// jsonLines decodes the one JSON object per file that run --json prints.
func jsonLines(tb testing.TB, out string) []map[string]any {
	tb.Helper()
	var objs []map[string]any
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			tb.Fatalf("stdout is not JSON objects: %v\n%s", err, out)
		}
		objs = append(objs, obj)
	}
	return objs
}

// summaryKeys are the fields every --json object of run carries, failures included.
var summaryKeys = []string{"run_id", "file", "rows", "rejected", "submitted", "succeeded", "pending", "failed",
	"unknown", "skipped", "total_amount", "reports", "exit_code"}

func assertFailureObject(tb testing.TB, obj map[string]any, file string, code int) {
	tb.Helper()
	for _, key := range summaryKeys {
		if _, ok := obj[key]; !ok {
			tb.Errorf("JSON of %s lacks %q: %v", file, key, obj)
		}
	}
	if obj["file"] != file || obj["exit_code"] != float64(code) {
		tb.Errorf("JSON %v, want file %s with exit_code %d", obj, file, code)
	}
	if msg, _ := obj["error"].(string); msg == "" {
		tb.Errorf("JSON of %s has no error: %v", file, obj)
	}
}

func TestCommandFlagsAfterArguments(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	u := newUser(t, sb)
	sample := samplePath(t)

	out, errOut, code := u.run("run", sample, "--dry-run", "--json")
	if code != 0 {
		t.Fatalf("run FILE --dry-run: exit %d: %s %s", code, out, errOut)
	}
	if objs := jsonLines(t, out); len(objs) != 1 || objs[0]["dry_run"] != true {
		t.Errorf("run FILE --dry-run --json printed %q, want one dry run", out)
	}
	if n := sb.Stats().Creates; n != 0 {
		t.Fatalf("a flag after the file paid it: %d creates", n)
	}

	// After "--" everything is a file name: "--dry-run" is then a file, and it does not exist.
	_, errOut, code = u.run("run", "--dry-run", sample, "--", "--dry-run")
	if code != 2 || !strings.Contains(errOut, "--dry-run: no such file") {
		t.Errorf("run FILE -- --dry-run: exit %d, stderr %q; want 2 naming the file --dry-run", code, errOut)
	}

	// Every file is checked before any is paid.
	_, errOut, code = u.run("run", sample, "missing.csv")
	if code != 2 || !strings.Contains(errOut, "missing.csv") || strings.Contains(errOut, "nothing is lost") {
		t.Errorf("run FILE missing.csv: exit %d, stderr %q; want 2 naming missing.csv", code, errOut)
	}
	if n := sb.Stats().Creates; n != 0 {
		t.Fatalf("a run with a missing second file paid the first: %d creates", n)
	}

	dir := filepath.Join(u.dir, "payroll")
	if err := os.MkdirAll(filepath.Join(dir, "inbox"), 0o750); err != nil {
		t.Fatal(err)
	}
	copyFile(t, sample, filepath.Join(dir, "inbox", "november.csv"))
	if _, errOut, code := u.run("watch", dir, "--once", "--settle", "0"); code != 0 {
		t.Errorf("watch DIR --once: exit %d: %s", code, errOut)
	}
	if n := sb.Stats().Creates; n != 50 {
		t.Errorf("watch DIR --once paid %d rows, want 50", n)
	}
}

func TestCommandHelp(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}, {"help", "-h"}} {
		out, errOut, code := u.run(args...)
		if code != 0 || !strings.Contains(out, "commands:") || errOut != "" {
			t.Errorf("payout %v: exit %d, stdout %q, stderr %q; want the list on stdout", args, code, out, errOut)
		}
	}
	for _, args := range [][]string{{"run", "-h"}, {"help", "run"}, {"run", "--help"}} {
		out, errOut, code := u.run(args...)
		if code != 0 || !strings.Contains(out, "usage: payout run") || !strings.Contains(out, "-dry-run") || errOut != "" {
			t.Errorf("payout %v: exit %d, stdout %q, stderr %q; want run's help on stdout", args, code, out, errOut)
		}
	}
	if out, errOut, code := u.run("help", "watch"); code != 0 || !strings.Contains(out, "-once") {
		t.Errorf("help watch: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, args := range [][]string{{}, {"run"}, {"run", "--no-such-flag", "x.csv"}, {"help", "no-such-command"}, {"no-such-command"}} {
		out, errOut, code := u.run(args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "usage: payout") {
			t.Errorf("payout %v: exit %d, stdout %q, stderr %q; want usage on stderr, exit 2", args, code, out, errOut)
		}
		if strings.Contains(errOut, "nothing is lost") {
			t.Errorf("payout %v: a usage error says to run again: %q", args, errOut)
		}
		// The mistake stays in view: a short reminder, not every flag of the command.
		if strings.Contains(errOut, "-allow-partial") {
			t.Errorf("payout %v: a usage error lists every flag: %q", args, errOut)
		}
	}
}

func TestCommandVersion(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	out, errOut, code := u.run("version")
	if code != 0 || !strings.HasPrefix(out, "payout ") || len(strings.Fields(out)) < 3 {
		t.Errorf("version: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	bin := filepath.Join(t.TempDir(), "payout")
	build := exec.Command("go", "build", "-ldflags", "-X main.version=v9.8.7-test", "-o", bin, ".")
	if msg, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, msg)
	}
	got, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(got), "payout v9.8.7-test") {
		t.Errorf("version of a build with -X main.version: %q, %v", got, err)
	}
}

func TestCommandRefusesWhatIsNotARegularFile(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	u := newUser(t, sb)
	fifo := filepath.Join(u.dir, "fifo.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(u.dir, "folder.csv")
	if err := os.Mkdir(folder, 0o750); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(u.dir, "zero.csv")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, kind string }{
		{fifo, "a named pipe (FIFO)"}, {folder, "a folder"}, {zero, "a device"},
	} {
		for _, dry := range []bool{false, true} {
			args := []string{"run", "--json", tc.path}
			if dry {
				args = append(args, "--dry-run")
			}
			out, errOut, code := u.runWithin(30*time.Second, args...)
			if code != 2 || !strings.Contains(errOut, tc.path+": is "+tc.kind+", not a regular file") {
				t.Errorf("payout %v: exit %d, stderr %q; want 2 saying it is %s", args, code, errOut, tc.kind)
			}
			if objs := jsonLines(t, out); len(objs) != 1 {
				t.Errorf("payout %v printed %d JSON objects, want 1: %s", args, len(objs), out)
			} else {
				assertFailureObject(t, objs[0], tc.path, 2)
			}
		}
	}
	if _, errOut, code := u.runWithin(30*time.Second, "watch", "--once", zero); code != 2 || !strings.Contains(errOut, "is not a folder") {
		t.Errorf("watch of a file: exit %d, stderr %q; want 2", code, errOut)
	}
	// The ledger's lock is taken only once the inputs are known to be readable files.
	if _, err := os.Stat(filepath.Join(u.dir, "payout-ledger.db.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused input took the ledger's lock: %v", err)
	}
	if n := sb.Stats().Creates; n != 0 {
		t.Errorf("refused inputs sent %d creates", n)
	}
}

func TestCommandReportFolderCheckedBeforeSending(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	u := newUser(t, sb)
	blocker := filepath.Join(u.dir, "not-a-folder")
	if err := os.WriteFile(blocker, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "--report-dir", filepath.Join(blocker, "reports"), samplePath(t)},
		{"run", "--report-dir", blocker, samplePath(t)},
		{"run", "--dry-run", "--report-dir", blocker, samplePath(t)},
	} {
		_, errOut, code := u.run(args...)
		if code != 2 || !strings.Contains(errOut, "report folder") || strings.Contains(errOut, "nothing is lost") {
			t.Errorf("payout %v: exit %d, stderr %q; want 2 naming the report folder", args, code, errOut)
		}
	}
	if n := sb.Stats().Creates; n != 0 {
		t.Errorf("a run whose reports cannot be written sent %d creates", n)
	}
	// The same in folder mode, for --report-dir and DIR/reports.
	dir := filepath.Join(u.dir, "payroll")
	if err := os.MkdirAll(filepath.Join(dir, "inbox"), 0o750); err != nil {
		t.Fatal(err)
	}
	copyFile(t, samplePath(t), filepath.Join(dir, "inbox", "november.csv"))
	if _, errOut, code := u.run("watch", "--once", "--settle", "0", "--report-dir", blocker, dir); code != 2 {
		t.Errorf("watch with an unwritable --report-dir: exit %d, stderr %q; want 2", code, errOut)
	}
	if err := os.WriteFile(filepath.Join(dir, "reports"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := u.run("watch", "--once", "--settle", "0", dir); code != 2 {
		t.Errorf("watch with DIR/reports a file: exit %d, stderr %q; want 2", code, errOut)
	}
	if n := sb.Stats().Creates; n != 0 {
		t.Errorf("a watch whose reports cannot be written sent %d creates", n)
	}
}

func TestCommandRefusesBadLimits(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	u := newUser(t, sb)
	sample := samplePath(t)
	for _, flags := range [][]string{
		{"--rate", "0"}, {"--rate", "-5"}, {"--rate=-0.5"}, {"--rate", "nan"}, {"--workers", "0"}, {"--workers", "-2"},
		{"--workers", "1000"}, {"--burst", "0"}, {"--burst", "-1"},
	} {
		args := append(append([]string{"run"}, flags...), sample)
		_, errOut, code := u.run(args...)
		if code != 2 || !strings.Contains(errOut, strings.TrimLeft(strings.SplitN(flags[0], "=", 2)[0], "-")) {
			t.Errorf("payout %v: exit %d, stderr %q; want 2 naming the flag", args, code, errOut)
		}
	}
	if _, errOut, code := u.run("reconcile", "--workers", "0"); code != 2 {
		t.Errorf("reconcile --workers 0: exit %d, stderr %q; want 2", code, errOut)
	}
	if n := sb.Stats().Creates; n != 0 {
		t.Fatalf("refused limits sent %d creates", n)
	}
	if _, errOut, code := u.run("run", "--rate", "inf", "--burst", "3", "--workers", "2", sample); code != 0 {
		t.Errorf("run --rate inf: exit %d: %s", code, errOut)
	}
	if n := sb.Stats().Creates; n != 50 {
		t.Errorf("run --rate inf sent %d creates, want 50", n)
	}
}

func TestCommandNamesAllMissingConfiguration(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	bare := &user{tb: t, dir: u.dir, env: []string{"PATH=" + os.Getenv("PATH"), "PAYOUT_CALLBACK_URL=http://127.0.0.1:1/cb"}}
	_, errOut, code := bare.run("run", samplePath(t))
	want := "configuration: PAYOUT_BASE_URL, PAYOUT_AUTH_TOKEN (or PAYOUT_AUTH_TOKEN_FILE), PAYOUT_VIRTUAL_POOL_REF, PAYOUT_REDIRECT_URL not set"
	if code != 2 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, want)
	}
	_, errOut, code = bare.run("run", "--dry-run", samplePath(t))
	want = "configuration: PAYOUT_BASE_URL, PAYOUT_AUTH_TOKEN (or PAYOUT_AUTH_TOKEN_FILE) not set"
	if code != 2 || !strings.Contains(errOut, want) {
		t.Errorf("dry run: exit %d, stderr %q; want 2 and %q", code, errOut, want)
	}
	broken := &user{tb: t, dir: u.dir, env: []string{"PATH=" + os.Getenv("PATH"), "PAYOUT_RATE=nan", "PAYOUT_WORKERS=0"}}
	_, errOut, code = broken.run("providers")
	if code != 2 || !strings.Contains(errOut, "PAYOUT_RATE") || !strings.Contains(errOut, "PAYOUT_WORKERS") {
		t.Errorf("bad PAYOUT_RATE and PAYOUT_WORKERS: exit %d, stderr %q; want 2 naming both", code, errOut)
	}
}

func TestCommandJSONOnFailure(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	u := newUser(t, sb)
	sample := samplePath(t)
	broken := filepath.Join(u.dir, "broken.csv")
	if err := os.WriteFile(broken, []byte("external_invoice_ref,amount\nX-1,10.00\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	out, _, code := u.run("run", "--json", broken)
	objs := jsonLines(t, out)
	if code != 3 || len(objs) != 1 {
		t.Fatalf("run --json of a file rejected as a whole: exit %d, stdout %q; want 3 and one object", code, out)
	}
	assertFailureObject(t, objs[0], broken, 3)

	out, _, code = u.run("run", "--json", sample, "missing.csv")
	objs = jsonLines(t, out)
	if code != 2 || len(objs) != 2 {
		t.Fatalf("run --json FILE missing.csv: exit %d, stdout %q; want 2 and an object per file", code, out)
	}
	assertFailureObject(t, objs[0], sample, 2)
	assertFailureObject(t, objs[1], "missing.csv", 2)

	bare := &user{tb: t, dir: u.dir, env: []string{"PATH=" + os.Getenv("PATH")}}
	out, _, code = bare.run("run", "--json", sample)
	objs = jsonLines(t, out)
	if code != 2 || len(objs) != 1 {
		t.Fatalf("run --json without configuration: exit %d, stdout %q; want 2 and one object", code, out)
	}
	assertFailureObject(t, objs[0], sample, 2)
	if n := sb.Stats().Creates; n != 0 {
		t.Errorf("failed runs sent %d creates", n)
	}
}

func TestCommandDryRunFailureDoesNotPromiseAResume(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	wrong := &user{tb: t, dir: u.dir, env: append(append([]string(nil), u.env...), "PAYOUT_AUTH_TOKEN=wrong-token")}
	_, errOut, code := wrong.run("run", "--dry-run", samplePath(t))
	if code == 0 || strings.Contains(errOut, "run again") || !strings.Contains(errOut, "nothing was sent") {
		t.Errorf("dry run refused by the service: exit %d, stderr %q; want it to say nothing was sent, not to run again", code, errOut)
	}
}

func TestCommandWatchJSONNamesTheRejection(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	dir := filepath.Join(u.dir, "payroll")
	if err := os.MkdirAll(filepath.Join(dir, "inbox"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "inbox", "broken.csv"), []byte("external_invoice_ref,amount\nX-1,10.00\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := u.run("watch", "--once", "--settle", "0", "--json", dir)
	objs := jsonLines(t, out)
	if code != 3 || len(objs) != 1 {
		t.Fatalf("watch --once --json of a rejected file: exit %d, stdout %q, stderr %q; want 3 and one object", code, out, errOut)
	}
	assertFailureObject(t, objs[0], filepath.Join(dir, "failed", "broken.csv"), 3)
}
