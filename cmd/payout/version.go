package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

// version is the release's name, set by the build: go build -ldflags "-X main.version=v1.2.3".
// Left empty, the version comes from the module and version control data Go records in the binary.
var version = ""

func versionCmd(_ context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "version", "version")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return usageError("version: unexpected argument %q", fs.Arg(0))
	}
	fmt.Fprintln(e.stdout, "payout", buildVersion())
	return nil
}

// buildVersion names the build: the -ldflags version, else the module's version, with the
// commit it was built from when Go recorded one.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		if version != "" {
			return version
		}
		return "unknown"
	}
	v := version
	if v == "" {
		v = info.Main.Version // "(devel)" for a build from a checkout
	}
	var revision, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if revision != "" {
		v += fmt.Sprintf(" (commit %s%s)", revision, modified)
	}
	return fmt.Sprintf("%s %s", v, info.GoVersion)
}
