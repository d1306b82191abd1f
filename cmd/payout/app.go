package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/payout/payout/batch"
)

// Exit codes: DESIGN.md, "Exit codes of run and watch --once".
const (
	exitOK        = batch.ExitOK
	exitAborted   = batch.ExitAborted
	exitUsage     = batch.ExitUsage
	exitRejected  = batch.ExitRejected
	exitAttention = batch.ExitAttention
)

// exitError carries an exit code; err, when set, is printed on stderr.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// env is what a command sees of the process: streams and environment, injected for tests.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

func commands() []command {
	return []command{
		{"init", "create a new ledger (the only command that does)", initCmd},
		{"run", "validate, submit, record and report one or more files", runCmd},
		{"watch", "folder mode: pay files dropped into DIR/inbox", watchCmd},
		{"reconcile", "look up every payout not yet final and write a reconciliation report", reconcileCmd},
		{"report", "write a run's reports again from the ledger", reportCmd},
		{"status", "the ledger at a glance, or one payout with its history", statusCmd},
		{"providers", "list the service's payout providers", providersCmd},
		{"callbacks", "receive and verify the service's callbacks", callbacksCmd},
		{"sandbox", "run the simulator of the payout service", sandboxCmd},
		{"demo", "pay the sample file through a sandbox on loopback", demoCmd},
		{"template", "write an empty input file with the expected header", templateCmd},
	}
}

// Run runs the command named by args[0].
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stderr)
		if len(args) == 0 {
			return &exitError{code: exitUsage}
		}
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(ctx, e, args[1:])
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
	}
	printUsage(stderr)
	return usageError("unknown command %q", args[0])
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: payout COMMAND [flags] [args]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'payout COMMAND -h' for a command's flags. Configuration: README.md.")
}

// newFlagSet makes a command's flag set; parse errors become usage errors.
func newFlagSet(e *env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "usage: payout %s\n\nflags:\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &exitError{code: exitUsage}
	}
	return nil
}

// logOptions are the logging flags every long-running command takes.
type logOptions struct {
	verbose bool
	format  string
}

func (o *logOptions) register(fs *flag.FlagSet) {
	fs.BoolVar(&o.verbose, "v", false, "log every step, not only warnings and errors")
	fs.StringVar(&o.format, "log-format", "text", "log format: text or json")
}

// logger logs to stderr: warnings and errors only unless -v, so that cron mails only trouble.
func (o *logOptions) logger(w io.Writer) (*slog.Logger, error) {
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(o.format) {
	case "text", "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usageError("--log-format %q: use text or json", o.format)
}

// isTerminal reports whether w is a terminal (a progress bar is drawn only there).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
