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
	"time"

	"golang.org/x/term"

	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/ledger"
)

// Exit codes, as batch defines them.
const (
	exitOK        = exitcode.OK
	exitAborted   = exitcode.Aborted
	exitUsage     = exitcode.Usage
	exitRejected  = exitcode.Rejected
	exitAttention = exitcode.Attention
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
		{"plan", "print a file's plan statement: what a run would pay, as signers sign it", planCmd},
		{"approve", "sign a file's plan with your OpenSSH key, beside the file (FILE.<you>.sig)", approveCmd},
		{"reject", "sign a refusal of a file's plan, beside the file: no run pays it while it is there", rejectCmd},
		{"policy", "show or change how many distinct signers a file's plan needs (kept in the ledger)", policyCmd},
		{"release", "make a stuck payout READY again once the service is known not to hold it", releaseCmd},
		{"status", "the ledger at a glance, or one payout with its history", statusCmd},
		{"providers", "list the service's payout providers", providersCmd},
		{"callbacks", "receive and verify the service's callbacks", callbacksCmd},
		{"serve", "the web console: sign in with a passkey, drop files, follow them, approve or refuse plans", serveCmd},
		{"sandbox", "run the simulator of the payout service", sandboxCmd},
		{"demo", "pay the sample file through a sandbox on loopback", demoCmd},
		{"template", "write an input file with the expected header (--example: made-up rows the sandbox pays)", templateCmd},
		{"audit", "check the hash-chained trail (verify), or write a run's evidence pack (export)", auditCmd},
		{"purge", "mask names and account numbers of old final payouts, keeping the money trail", purgeCmd},
		{"version", "print the build's version (also: payout --version)", versionCmd},
		{"help", "print this list, or a command's help: help COMMAND", helpCmd},
	}
}

// Run runs the command named by args[0].
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	if len(args) == 0 {
		printUsage(stderr)
		return &exitError{code: exitUsage}
	}
	name := args[0]
	switch {
	case isHelpFlag(name):
		name = "help"
	case name == "--version" || name == "-version":
		name = "version"
	}
	c, ok := findCommand(name)
	if !ok {
		printUsage(stderr)
		if near := suggestCommand(name); near != "" {
			return usageError("unknown command %q: did you mean %s?", name, near)
		}
		return usageError("unknown command %q", name)
	}
	err := c.run(ctx, e, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

func findCommand(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func isHelpFlag(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "--h":
		return true
	}
	return false
}

// helpCmd prints the list of commands, or one command's help, on stdout.
func helpCmd(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] == "help" || isHelpFlag(args[0]) {
		printUsage(e.stdout)
		return nil
	}
	c, ok := findCommand(args[0])
	if len(args) > 1 || !ok {
		printUsage(e.stderr)
		return usageError("help: name one command")
	}
	return c.run(ctx, e, []string{"-h"})
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: payout COMMAND [flags] [args]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nFlags may come before or after the arguments; \"--\" ends the flags.")
	fmt.Fprintln(w, "Run 'payout help COMMAND' for a command's flags. Configuration: README.md.")
}

// flagOutput is where a flag set writes: its help goes to stdout when the help was asked for,
// and to stderr when it explains a usage error.
type flagOutput struct {
	stdout, stderr io.Writer
	asked          bool
}

func (w *flagOutput) Write(p []byte) (int, error) {
	if w.asked {
		return w.stdout.Write(p)
	}
	return w.stderr.Write(p)
}

// newFlagSet makes a command's flag set; parse errors become usage errors.
func newFlagSet(e *env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	out := &flagOutput{stdout: e.stdout, stderr: e.stderr}
	fs.SetOutput(out)
	fs.Usage = func() {
		if !out.asked {
			// After a mistake, the mistake is what must be seen: a short reminder, not every flag.
			fmt.Fprintf(out, "usage: payout %s\n(payout help %s lists its flags)\n", usage, name)
			return
		}
		fmt.Fprintf(out, "usage: payout %s\n\nflags:\n", usage)
		shown := flag.NewFlagSet(name, flag.ContinueOnError)
		shown.SetOutput(out)
		fs.VisitAll(func(f *flag.Flag) {
			if !isRefusedFlag(f) {
				shown.Var(f.Value, f.Name, f.Usage)
			}
		})
		shown.PrintDefaults()
	}
	return fs
}

// flagGiven reports whether the command line set the flag name, to tell a default from a choice.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// parseFlags parses a command's arguments with its flags allowed anywhere among them, so that
// `run FILE --dry-run` is a dry run and never a file named "--dry-run". "--" ends the flags; a
// lone "-" is an argument. -h prints the help on stdout and returns flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string) error {
	flags, positional := splitArgs(fs, args)
	if name := unknownFlag(fs, flags); name != "" {
		fs.Usage()
		if near := suggestFlag(fs, name); near != "" {
			return usageError("%s: unknown flag --%s: did you mean --%s?", fs.Name(), name, near)
		}
		return usageError("%s: unknown flag --%s", fs.Name(), name)
	}
	out, usage := fs.Output(), fs.Usage
	// The flag package prints its error before the help; the error is returned instead, to be
	// printed last where it is seen.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(append(append(flags, "--"), positional...))
	fs.SetOutput(out)
	fs.Usage = usage
	switch {
	case errors.Is(err, flag.ErrHelp):
		if w, ok := out.(*flagOutput); ok {
			w.asked = true
			defer func() { w.asked = false }()
		}
		fs.Usage()
		return err
	case err != nil:
		fs.Usage()
		return usageError("%s: %v", fs.Name(), err)
	}
	// Every local user can read a process's arguments (ps, /proc): a password there is given away.
	if f := fs.Lookup("ledger"); f != nil && ledger.HasPassword(f.Value.String()) {
		return usageError("%s: --ledger %s carries a password, which every user of this host can read in the process list: "+
			"keep it in PGPASSFILE or ~/.pgpass (mode 0600), or give the URL in $%s instead", fs.Name(), ledger.Redact(f.Value.String()), envLedger)
	}
	return nil
}

// splitArgs separates the flags (with their values) from the positional arguments.
func splitArgs(fs *flag.FlagSet, args []string) (flags, positional []string) {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			return flags, append(positional, args[i+1:]...)
		}
		if len(arg) < 2 || arg[0] != '-' {
			positional = append(positional, arg)
			continue
		}
		flags = append(flags, arg)
		name := strings.TrimPrefix(arg[1:], "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil && !isBoolFlag(f) && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return flags, positional
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// logOptions are the logging flags every long-running command takes.
type logOptions struct {
	verbose bool
	format  string
	tz      zoneOption
	// zone is the operator's time zone, set by logger from --tz, PAYOUT_TZ or the system's.
	zone *time.Location
}

func (o *logOptions) register(fs *flag.FlagSet) {
	fs.BoolVar(&o.verbose, "v", false, "log every step, and each payout's change of state (its account masked), not only warnings and errors")
	fs.StringVar(&o.format, "log-format", "text", "log format: text or json")
	o.tz.register(fs)
}

// logger logs to e's stderr: warnings and errors only unless -v, so that cron mails only trouble;
// -v logs the steps (info) and each payout's changes (debug).
// It also settles the operator's time zone (o.zone): text logs, for people, show their times in it.
func (o *logOptions) logger(e *env) (*slog.Logger, error) {
	var err error
	if o.zone, err = o.tz.location(e.getenv); err != nil {
		return nil, err
	}
	w := e.stderr
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelDebug
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(o.format) {
	case "text", "":
		zone := o.zone
		opts.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 && a.Value.Kind() == slog.KindTime {
				a.Value = slog.StringValue(humanTime(a.Value.Time(), zone))
			}
			return a
		}
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
