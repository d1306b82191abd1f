package main

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/payout/payout/batch/atomicfile"
	"github.com/payout/payout/batch/read"
)

func templateCmd(_ context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "template", "template [--xlsx] [--out FILE]")
	xlsx := fs.Bool("xlsx", false, "write an XLSX workbook instead of CSV")
	out := fs.String("out", "", "file to write (default: stdout for CSV; payout-template.xlsx for XLSX)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	path := *out
	if path == "" && *xlsx {
		path = "payout-template.xlsx"
	}
	if path == "" {
		return read.WriteTemplate(e.stdout, false)
	}
	err := atomicfile.WriteNew(path, 0o644, func(w io.Writer) error { return read.WriteTemplate(w, *xlsx) })
	switch {
	case errors.Is(err, os.ErrExist):
		return usageError("template: %s already exists and is never overwritten: name another file with --out", path)
	case err != nil:
		// Nothing was written: the temporary file is gone and path was not made.
		return usageError("template: %v", err)
	}
	return nil
}
