package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/payout/payout/batch/actor"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/reconcile"
)

// releaseCmd is `payout release REF --reason TEXT`: the way out for a payout stuck UNKNOWN (sent
// outcome.MaxSendAttempts times with no answer and not found by lookups). Exit 0: released, READY,
// and the next run of its file sends it; 2: refused, nothing changed (the service has it, it is
// not UNKNOWN, no reason given); 1: the service or the ledger failed, nothing changed.
func releaseCmd(ctx context.Context, e *env, args []string) error {
	var o runOptions
	var reason string
	fs := newFlagSet(e, "release", "release REF --reason TEXT [--ledger FILE]")
	o.logOptions.register(fs)
	fs.StringVar(&reason, "reason", "", "why the payout may be sent again: what the service said when you checked (required)")
	addLedgerFlag(fs, &o.ledger)
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "time limit of the lookup")
	o.registerLimits(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usageError("release: name one external_invoice_ref")
	}
	if strings.TrimSpace(reason) == "" {
		return usageError("release: --reason is required: say what the service said when you checked that it holds no payout %s", fs.Arg(0))
	}
	s, err := newSession(ctx, e, &o, modeReconcile)
	if err != nil {
		return err
	}
	defer s.close()
	ref := fs.Arg(0)
	p, err := reconcile.Release(ctx, s.runner.Config(), ref, reason, actor.Current())
	switch {
	case errors.Is(err, outcome.ErrReleaseRefused):
		return usageError("release: %v", err)
	case err != nil:
		return &exitError{code: exitAborted, err: fmt.Errorf("release %s: %w: nothing changed", ref, err)}
	}
	fmt.Fprintf(e.stdout, "released %s: READY; the next run of its file sends it, and runs may send it up to %d more times before it is stuck again (first recorded by run %s, line %d)\n",
		ref, outcome.MaxSendAttempts-p.Attempts, p.RunID, p.Line)
	return nil
}
