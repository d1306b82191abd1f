package main_test

import (
	"os"
	"os/exec"
	"testing"
)

// needTool returns the path of an outside program a test checks the reports with (a browser,
// an office suite). Where it is missing the test is skipped with what to install, but under CI
// (CI=true), whose set-up (.ci/run) installs it, a missing tool fails the test: it must never
// pass there without checking.
func needTool(tb testing.TB, debianPackage string, names ...string) string {
	tb.Helper()
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
