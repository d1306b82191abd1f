package main_test

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/payout/payout/ledger"
)

// walkthroughHeading is the README heading whose first ```sh block is the walkthrough.
const walkthroughHeading = "## Walkthrough"

// TestReadmeWalkthrough runs the README's walkthrough block as a person pasting it would: bash
// with -euo pipefail, a fresh HOME and working folder, the built payout first in PATH, and the
// sandbox and callback receiver the block starts itself, on free loopback ports (the block's
// SANDBOX and RECEIVER). Every command must exit 0, and the run, its reports and the
// reconciliation must be there, with the payouts paid.
func TestReadmeWalkthrough(t *testing.T) {
	t.Parallel()
	block := walkthroughBlock(t, "../../README.md")
	dir := t.TempDir()
	script := filepath.Join(t.TempDir(), "walkthrough.sh")
	if err := os.WriteFile(script, []byte(block), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(t.TempDir(), "output"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", script)
	cmd.Dir = dir
	cmd.Env = []string{
		"HOME=" + dir, "PATH=" + filepath.Dir(binPath) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"SANDBOX=" + freeLoopback(t), "RECEIVER=" + freeLoopback(t),
	}
	// Output goes to a file, not a pipe, so that a server the block left running cannot hold the
	// test; the whole process group (bash and what it started) is killed when the test ends.
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err = cmd.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	err = cmd.Wait()
	output, _ := os.ReadFile(out.Name())
	if err != nil {
		t.Fatalf("the README's walkthrough failed: %v\n%s", err, output)
	}

	for _, pattern := range []string{"payroll.csv", "reports/payroll.*.result.csv", "reports/payroll.*.result.xlsx",
		"reports/payroll.*.report.html", "reports/reconcile.*.html"} {
		if m, _ := filepath.Glob(filepath.Join(dir, pattern)); len(m) == 0 {
			t.Errorf("the walkthrough made no %s; its output:\n%s", pattern, output)
		}
	}
	ledgerPath := filepath.Join(dir, "payout", "ledger.db")
	db, err := ledger.Open(t.Context(), ledgerPath, ledger.Options{})
	if err != nil {
		t.Fatalf("the walkthrough's ledger: %v\n%s", err, output)
	}
	defer db.Close()
	totals, err := db.Counts(t.Context(), ledger.CountRead{})
	if err != nil {
		t.Fatal(err)
	}
	counts := totals.States
	if paid := counts[ledger.Succeeded].Count; paid == 0 || paid != totalCount(counts) {
		t.Errorf("after the walkthrough the ledger holds %v; want every payout SUCCEEDED\n%s", counts, output)
	}
}

// walkthroughBlock returns the first ```sh block after the walkthrough heading of the README.
func walkthroughBlock(t *testing.T, readme string) string {
	t.Helper()
	f, err := os.Open(readme)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var block strings.Builder
	heading, inside := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !heading:
			heading = strings.TrimSpace(line) == walkthroughHeading
		case !inside && strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "```"):
			t.Fatalf("%s: the section %q has no ```sh block before %q", readme, walkthroughHeading, line)
		case !inside:
			inside = strings.TrimSpace(line) == "```sh"
		case strings.HasPrefix(line, "```"):
			return block.String()
		default:
			block.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("%s: no heading %q followed by a closed ```sh block", readme, walkthroughHeading)
	return ""
}

// freeLoopback returns a loopback address no one listened on a moment ago.
func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func totalCount(counts map[ledger.State]ledger.CountAmount) int {
	n := 0
	for _, c := range counts {
		n += c.Count
	}
	return n
}

// readmeMaxLines is the README's length limit: a manual read through, its figures in BENCHMARKS.md.
const readmeMaxLines = 250

// TestReadmeIsAManual holds the README to a manual's length.
func TestReadmeIsAManual(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, want at most %d: move detail into package doc comments", n, readmeMaxLines)
	}
}
