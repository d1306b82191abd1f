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
	if code == 0 || !strings.Contains(errOut, "--dry-run") {
		t.Errorf("run FILE -- --dry-run: exit %d, stderr %q; want a failure naming the file --dry-run", code, errOut)
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
	u := newUser(t, newSandbox(t))
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
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
	}
}

func TestCommandVersion(t *testing.T) {
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

