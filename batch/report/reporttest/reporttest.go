// Package reporttest finds the outside programs that tests open reports with (a browser, an
// office suite, PDF tools), and skips, or under CI fails, a test without them.
package reporttest

import (
	"os"
	"os/exec"
	"testing"
)

// NeedTool returns the path of the first of names on PATH. Where none is, the test is skipped
// with what to install; under CI (CI=true), whose set-up (.ci/run) installs it, the test fails:
// a report must never pass there unchecked. The quick loop (go test -short) leaves these tests
// out: each starts a browser or an office suite.
func NeedTool(tb testing.TB, debianPackage string, names ...string) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("-short leaves out the tests that open reports and pages in " + names[0] + "; run without -short for them")
	}
	for _, name := range names {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	msg := names[0] + " is not installed: install it with `apt-get install -y " + debianPackage + "` (.ci/run does so under CI=true)"
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
	return ""
}
