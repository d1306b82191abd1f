package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/ledger"
)

// initCmd makes a new, empty ledger. It is the only command that does: every other one refuses a
// missing ledger, because a new one does not know what was paid and would pay it all again.
func initCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "init", "init [--ledger FILE] [--approvals N]")
	ledgerFlag := fs.String("ledger", "", "where to create the ledger (default $"+envLedger+" or "+defaultLedger+")")
	approvals := fs.Int("approvals", 0, "distinct signers each file's plan needs before a run pays it (0: none; change it later with payout policy)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return usageError("init: unexpected argument %q (use --ledger FILE)", fs.Arg(0))
	}
	if *approvals < 0 {
		return usageError("init: --approvals %d: want 0 or more", *approvals)
	}
	path := ledgerPath(e, *ledgerFlag)
	// The policy is the new chain's first event, written with the schema, 0 included: a
	// ledger without it is refused for paying.
	db, err := ledger.Create(ctx, path, stamped(ledger.Options{Approvals: *approvals}))
	if err != nil {
		return createError(err)
	}
	if err := db.Close(); err != nil {
		return &exitError{code: exitAborted, err: fmt.Errorf("init: %w", err)}
	}
	if ledger.IsURL(path) {
		fmt.Fprintf(e.stdout, "created an empty ledger in %s (PostgreSQL: grant it to the accounts that run payout only)\n", ledger.Redact(path))
	} else {
		fmt.Fprintf(e.stdout, "created an empty ledger at %s (readable by you only)\n", absPath(path))
	}
	if *approvals > 0 {
		fmt.Fprintf(e.stdout, "approval policy: each file's plan needs %d signatures by distinct signers ($%s lists who may sign)\n", *approvals, approval.EnvAllowedSigners)
	} else {
		fmt.Fprintf(e.stdout, "approval policy: no approval needed (payout policy --approvals N to require signatures)\n")
	}
	if !ledger.IsURL(path) && !filepath.IsAbs(path) {
		fmt.Fprintf(e.stdout, "for cron and other working directories: %s=%s\n", envLedger, absPath(path))
	}
	return nil
}

// ledgerPath is the ledger a command uses: --ledger, else $PAYOUT_LEDGER, else the default name
// in the working directory.
func ledgerPath(e *env, flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if v := e.getenv(envLedger); v != "" {
		return v
	}
	return defaultLedger
}

func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// createError maps a refusal of `payout init` to exit 2: nothing was made.
func createError(err error) error {
	var oe *ledger.OpenError
	switch {
	case errors.As(err, &oe) && errors.Is(err, ledger.ErrExists) && ledger.IsURL(oe.Path):
		return usageError("init: %s: %s: init never touches a database that has tables. To use that ledger, point %s at it; for a new ledger, create an empty database",
			oe.Path, oe.Detail, envLedger)
	case errors.As(err, &oe) && errors.Is(err, ledger.ErrExists):
		return usageError("init: %s already exists (%s): init never overwrites a file. To use it, point --ledger/%s at it; for a new ledger, choose another name",
			oe.Path, oe.Detail, envLedger)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission):
		return usageError("init: %v (the folder must exist and be writable)", err)
	case errors.Is(err, ledger.ErrPlaintext):
		return usageError("init: %v", err)
	}
	return &exitError{code: exitAborted, err: fmt.Errorf("init: %w", err)}
}

// ledgerError maps a refused ledger to exit 2 with what to do: nothing was done, and running the
// same command again cannot help. Other errors stop the command with exit 1.
func ledgerError(err error) error {
	var oe *ledger.OpenError
	if !errors.As(err, &oe) {
		return &exitError{code: exitAborted, err: fmt.Errorf("open ledger: %w", err)}
	}
	p := oe.Path
	switch {
	case errors.Is(err, ledger.ErrNoLedger) && ledger.IsURL(p):
		return usageError("no ledger in %s: run `payout init` with that URL in $%s to make one, or point $%s at the database that holds the ledger",
			p, envLedger, envLedger)
	case errors.Is(err, ledger.ErrNoLedger):
		return usageError("no ledger at %s: create one with `payout init --ledger %s`, or point --ledger/%s at the existing one (cron runs in another working directory: use an absolute path)",
			p, p, envLedger)
	case errors.Is(err, ledger.ErrEmptyLedger):
		return usageError("%s is empty (0 bytes) and is not a ledger: it may be a truncated copy. Restore the ledger from a backup; only if no payout was ever made with it, remove the file and run `payout init --ledger %s`",
			p, p)
	case errors.Is(err, ledger.ErrNotLedger):
		return usageError("%s is not a payout ledger (%s): point --ledger/%s at the ledger; if this is it, restore it from a backup",
			p, oe.Detail, envLedger)
	case errors.Is(err, ledger.ErrDamaged):
		return usageError("the ledger %s is damaged (%s); nothing was done, and running again cannot fix it. %s",
			p, oe.Detail, restoreAdvice(p))
	}
	return usageError("ledger: %v", err)
}
