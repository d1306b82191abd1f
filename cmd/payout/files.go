package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/payout/payout/batch/untrusted"
)

// checkInputs checks that every named input is a regular file that can be read before the
// ledger is locked and before any file is paid: a typo in the third file must not be found after
// the first two were paid, a FIFO or a device is never read (it may never end), and a symbolic
// link another account made is not followed (package untrusted). It returns the problem of
// each bad file, by path.
func checkInputs(paths []string) map[string]error {
	problems := make(map[string]error)
	for _, path := range paths {
		if err := checkInput(path); err != nil {
			problems[path] = err
		}
	}
	return problems
}

func checkInput(path string) error {
	f, _, err := untrusted.OpenOwned(path)
	var notRegular *untrusted.NotRegularError
	var foreign *untrusted.LinkError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: no such file", path)
	case errors.As(err, &notRegular):
		return fmt.Errorf("%s: is %s, not a regular file: name a CSV or XLSX file", path, untrusted.Kind(notRegular.Mode))
	case errors.As(err, &foreign):
		return foreign
	case err != nil:
		return fmt.Errorf("%s: cannot be read: %w", path, errors.Unwrap(err))
	}
	return f.Close()
}

// checkReportDir makes the report folder and proves that a file can be written in it.
func checkReportDir(dir string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return usageError("report folder %s cannot be made: %v: choose another with --report-dir (nothing was done)", dir, err)
	}
	f, err := os.CreateTemp(dir, ".payout-write-check-*")
	if err != nil {
		return usageError("report folder %s is not writable: %v: choose another with --report-dir (nothing was done)", dir, errors.Unwrap(err))
	}
	name := f.Name()
	f.Close()
	if err := os.Remove(name); err != nil {
		return usageError("report folder %s: %v", dir, err)
	}
	return nil
}
