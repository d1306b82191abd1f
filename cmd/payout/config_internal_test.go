package main

import (
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/time/rate"
)

// "inf" is the limiter's own "no limit", which the pool's sizing recognises; any other infinity
// would be taken for a finite rate and size the pool from it.
func TestRateInfIsNoLimit(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"inf", "Inf", "+Inf"} {
		r, err := parseRate(v)
		if err != nil || rate.Limit(r) != rate.Inf {
			t.Errorf("parseRate(%q) = %v, %v; want rate.Inf", v, r, err)
		}
	}
	if r, err := parseRate("50"); err != nil || r != 50 {
		t.Errorf("parseRate(50) = %v, %v", r, err)
	}
}

// TestFileReasonSaysWhy: each way a secret's file cannot be read is said in words, with what to
// check; root reads any file, so the denied case is built here rather than on disk.
func TestFileReasonSaysWhy(t *testing.T) {
	t.Parallel()
	for errno, want := range map[syscall.Errno]string{syscall.ENOENT: "no such file", syscall.EACCES: "permission denied",
		syscall.EISDIR: "it is a folder", syscall.EIO: "input/output error"} {
		got := fileReason(&fs.PathError{Op: "open", Path: "/run/secrets/token", Err: errno}).Error()
		if !strings.Contains(got, want) || strings.Contains(got, "/run/secrets") {
			t.Errorf("%v: %q, want %q without the path (the variable names it)", errno, got, want)
		}
	}
}
