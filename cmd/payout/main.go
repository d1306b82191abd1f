// Command payout pays payroll and vendor files out through the Merchant Payout Service, records
// every row in a SQLite ledger so that reruns never pay twice, and writes reports for auditors.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-signals
		fmt.Fprintf(os.Stderr, "payout: %s: finishing the requests in flight and recording them (send it again to stop at once)\n", sig)
		cancel()
		<-signals
		// Safe at any moment: every payout's intent was made durable before its request was sent,
		// and the next run looks up whatever has no recorded answer.
		fmt.Fprintln(os.Stderr, "payout: stopped at once; run again to resume")
		os.Exit(exitAborted)
	}()
	err := Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	cancel()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode prints err, if any, and maps it to the exit codes of DESIGN.md.
func exitCode(err error, stderr *os.File) int {
	if err == nil {
		return 0
	}
	var exit *exitError
	if errors.As(err, &exit) {
		if exit.err != nil {
			fmt.Fprintln(stderr, "payout:", exit.err)
		}
		return exit.code
	}
	fmt.Fprintln(stderr, "payout:", err)
	return exitAborted
}
