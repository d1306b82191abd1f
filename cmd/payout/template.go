package main

import (
	"context"
	"os"

	"github.com/payout/payout/batch"
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
		return batch.WriteTemplate(e.stdout, false)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return usageError("template: %v (it is never overwritten)", err)
	}
	if err := batch.WriteTemplate(f, *xlsx); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}
