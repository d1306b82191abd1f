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
const envStopAfterIntent = "PAYOUT_TEST_STOP_AFTER_INTENT"

func init() {
	testHooks = func(cfg *batch.Config) {
		ref := os.Getenv(envStopAfterIntent)
		if ref == "" {
			return
		}
		cfg.AfterIntent = func(r string) {
			if r == ref {
				stopHere()
			}
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
