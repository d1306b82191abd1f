//go:build payout_testhooks

package main

import (
	"os"
	"runtime"
	"syscall"

	"github.com/payout/payout/batch"
)

// envStopAfterIntent names a reference: once its intent is recorded, the process stops itself
// (SIGSTOP) before it proves its claim and sends, as a host paused there would; SIGCONT wakes it.
// envStopBeforePost stops it once the claim is proved, right before the POST.
const (
	envStopAfterIntent = "PAYOUT_TEST_STOP_AFTER_INTENT"
	envStopBeforePost  = "PAYOUT_TEST_STOP_BEFORE_POST"
)

func init() {
	testHooks = func(cfg *batch.Config) {
		cfg.AfterIntent = stopAt(os.Getenv(envStopAfterIntent))
		cfg.BeforePost = stopAt(os.Getenv(envStopBeforePost))
	}
}

// stopAt is a seam that stops the process at the payout ref, or nil for none.
func stopAt(ref string) func(string) {
	if ref == "" {
		return nil
	}
	return func(r string) {
		if r == ref {
			stopHere()
		}
	}
}

// stopHere stops the whole process before the calling goroutine goes on: the signal is sent to
// this very thread, which enters the stop on its way back from the system call (a signal sent to
// the process may be taken by another thread, while this one runs on for a while).
func stopHere() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_ = syscall.Tgkill(os.Getpid(), syscall.Gettid(), syscall.SIGSTOP)
}
