// Command payout pays payroll and vendor files out through the Merchant Payout Service, records
// every row in a SQLite ledger so that reruns never pay twice, and writes reports for auditors.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-signals
		// The progress bar's line is cleared first: the message is not to be appended to it.
		clearLine(os.Stderr)
		fmt.Fprintf(os.Stderr, "payout: %s: finishing the requests in flight and recording them (send it again to stop at once)\n", sig)
		cancel(stoppedBySignal{sig})
		<-signals
		clearLine(os.Stderr)
		// Safe at any moment: every payout's intent was made durable before its request was sent,
		// and the next run looks up whatever has no recorded answer.
		fmt.Fprintln(os.Stderr, "payout: stopped at once; run again to resume")
		os.Exit(exitAborted)
	}()
	err := Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	cancel(nil)
	os.Exit(exitCode(ctx, err, os.Stderr))
}

// clearLine empties the terminal line the cursor is on, where a progress bar may be drawn.
func clearLine(f *os.File) {
	if isTerminal(f) {
		fmt.Fprint(f, "\r\x1b[K")
	}
}

// stoppedBySignal is why a command's context ends on SIGINT or SIGTERM. It is a cancellation,
// so that errors.Is(err, context.Canceled) holds wherever the cause is passed on.
type stoppedBySignal struct{ sig os.Signal }

func (s stoppedBySignal) Error() string { return fmt.Sprintf("stopped by signal (%s)", s.sig) }

func (s stoppedBySignal) Unwrap() error { return context.Canceled }

// explainStop puts the signal that stopped the command in place of "context canceled", which
// means nothing to the person who pressed Ctrl-C.
func explainStop(ctx context.Context, msg string) string {
	var sig stoppedBySignal
	if !errors.As(context.Cause(ctx), &sig) {
		return msg
	}
	return strings.ReplaceAll(msg, context.Canceled.Error(), sig.Error())
}

// exitCode prints err, if any, and returns the exit code it carries (1 when it carries none).
func exitCode(ctx context.Context, err error, stderr *os.File) int {
	if err == nil {
		return 0
	}
	var exit *exitError
	if errors.As(err, &exit) {
		if exit.err != nil {
			fmt.Fprintln(stderr, "payout:", explainStop(ctx, exit.err.Error()))
		}
		return exit.code
	}
	fmt.Fprintln(stderr, "payout:", explainStop(ctx, err.Error()))
	return exitAborted
}
