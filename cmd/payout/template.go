package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/payout/payout/batch/atomicfile"
	"github.com/payout/payout/batch/read"
)

// exampleRows are a few payouts for trying payout against the sandbox, in read.Columns order:
// banks and an e-wallet by name and by id, accounts with leading zeros, amounts as people type
// them. Their references and descriptions say they are examples, so that nobody mistakes them
// for a real payroll; no account ends in the sandbox's failing suffix.
var exampleRows = [][]string{
	{"EXAMPLE-001", "Ahmad Faizal bin Ismail", "Maybank", "", "000181590832", "1,250.00", "Example: replace before paying"},
	{"EXAMPLE-002", "Tan Mei Ling", "CIMB Bank", "", "8001-2345-6789", "RM 2,480.50", "Example: replace before paying"},
	{"EXAMPLE-003", "Siti Nur Aisyah binti Rahman", "Public Bank Berhad", "", "0123456789", "980", "Example: replace before paying"},
	{"EXAMPLE-004", "Rajesh a/l Kumar", "", "5", "004412345671", "3100.75", "Example: replace before paying"},
	{"EXAMPLE-005", "Lim Wei Jie", "Touch 'n Go eWallet", "", "60123456789", "150.00", ""},
}

func templateCmd(_ context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "template", "template [--xlsx] [--example] [--out FILE]")
	xlsx := fs.Bool("xlsx", false, "write an XLSX workbook instead of CSV")
	example := fs.Bool("example", false, "add a few example rows, made up, that the sandbox pays (never pay them to a real service)")
	out := fs.String("out", "", "file to write (default: stdout for CSV; payout-template.xlsx for XLSX)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return usageError("template: unexpected argument %q: name the file with --out", fs.Arg(0))
	}
	write := func(w io.Writer) error { return read.WriteTemplate(w, *xlsx) }
	if *example {
		write = func(w io.Writer) error { return writeExample(w, *xlsx) }
	}
	path := *out
	if path == "" && *xlsx {
		path = "payout-template.xlsx"
	}
	if path == "" {
		return write(e.stdout)
	}
	err := atomicfile.WriteNew(path, 0o644, write)
	switch {
	case errors.Is(err, os.ErrExist):
		return usageError("template: %s already exists and is never overwritten: name another file with --out", path)
	case err != nil:
		// Nothing was written: the temporary file is gone and path was not made.
		return usageError("template: %v", err)
	}
	return nil
}

// writeExample writes the template with exampleRows: in XLSX, amounts as numbers (as a
// spreadsheet holds them) and every other cell as text, so the accounts keep their zeros.
func writeExample(w io.Writer, xlsx bool) error {
	if !xlsx {
		cw := csv.NewWriter(w)
		if err := cw.Write(read.Columns); err != nil {
			return fmt.Errorf("write template: %w", err)
		}
		if err := cw.WriteAll(exampleRows); err != nil {
			return fmt.Errorf("write template: %w", err)
		}
		return nil
	}
	rows := make([][]any, len(exampleRows))
	for i, r := range exampleRows {
		row := make([]any, len(r))
		for j, cell := range r {
			switch {
			case cell == "":
				// An empty cell, not an empty text: the reader sees no value.
			case read.Columns[j] == read.ColAmount:
				amount, err := read.ParseAmount(cell)
				if err != nil {
					return fmt.Errorf("write template: example row %d: %w", i+1, err)
				}
				// A spreadsheet's number is a double; two-decimal amounts this small read back exactly.
				row[j], _ = amount.Float64()
			default:
				row[j] = cell
			}
		}
		rows[i] = row
	}
	data, err := read.TemplateWithRows(rows)
	if err != nil {
		return fmt.Errorf("write template: %w", err)
	}
	_, err = w.Write(data)
	return err
}
