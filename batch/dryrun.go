package batch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/batch/runs"
	"github.com/payout/payout/ledger"
)

// errDuplicatesFound ends a dry run's pass that met duplicate references only at the end of
// the file: the pass after it rejects every row of them where it meets them.
var errDuplicatesFound = errors.New("duplicate references")

// dryRun checks the file and writes its reports in one pass, as rows are read: nothing is
// recorded or sent. A file with duplicate references is read a second time.
func (r *Runner) dryRun(ctx context.Context, log *slog.Logger, res Result, scan fileScan) (Result, error) {
	for {
		var sv *survey
		var again fileScan
		meta := report.Summary{RunID: res.RunID, Kind: string(ledger.KindDryRun), File: res.File, FileSHA256: res.SHA256,
			Started: res.StartedAt, DryRun: true, Zone: r.cfg.Zone}
		paths, summary, err := report.WriteRunStream(r.cfg.ReportDir, filepath.Base(res.File), meta, func(add func(report.Row) error) error {
			// The plan a signature binds is of the bytes read, hashed through the open file as they
			// are read; a dry run that needs no signature shows the plan of the file as opened
			// first, and reads it once instead of twice.
			scan.hash = scan.planText
			sv = newSurvey(scan)
			sc, err := scan.each(ctx, func(rows []fileRow, existing map[string]ledger.Payout) error {
				for i := range rows {
					sv.add(&rows[i], existing)
					if err := add(dryRunRow(&rows[i])); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			sv.sum, sv.sheet = sc.sum, sc.sheet
			var found bool
			if again, found = scan.withDuplicates(sc.found); found && scan.dups == nil {
				return errDuplicatesFound
			}
			if len(sc.found.File) > 0 {
				return &read.FileError{Path: res.File, Errs: sc.found.File}
			}
			return nil
		})
		if errors.Is(err, errDuplicatesFound) {
			scan = again
			continue
		}
		if err != nil {
			return res, err
		}
		if !scan.hash {
			sv.sum = res.SHA256
		} else if sv.sum != res.SHA256 {
			return res, fmt.Errorf("%w: its SHA-256 was %s when opened first, %s when its rows were read", ErrFileChanged, res.SHA256, sv.sum)
		}
		log.Info("file validated", "rows", sv.rows, "rejected", sv.rejected)
		res.Problems, res.Warnings = sv.problems, sv.warnings
		res = tally(res, summary)
		res.ExitCode = dryRunExit(res.Rejected, r.cfg.AllowPartial)
		res.EndedAt = r.cfg.Now().UTC()
		res.Reports = paths.List()
		// A dry run shows the plan a signature binds, and what the run would miss of the signatures
		// the policy asks for.
		_, err = r.checkApproval(ctx, &res, sv.plan())
		return res, err
	}
}

// dryRunExit is the exit code of a dry run: the code the run would end with if every row it
// would send were accepted. A rejected or held row rejects the file (exitcode.Rejected), unless
// --allow-partial pays the rest: then the run would finish with rows needing attention.
func dryRunExit(rejected int, allowPartial bool) int {
	switch {
	case rejected == 0:
		return exitcode.OK
	case allowPartial:
		return exitcode.Attention
	}
	return exitcode.Rejected
}

// dryRunRow is a row as a dry run reports it: valid rows READY, the rest REJECTED.
func dryRunRow(row *fileRow) report.Row {
	raw := row.raw
	out := report.Row{Line: raw.Line, Ref: raw.Ref, Recipient: raw.Recipient, Bank: raw.Bank, Account: raw.Account,
		State: string(ledger.Rejected), Message: joinRowErrors(row.errs)}
	if row.valid() {
		pay := row.payment
		out.Ref, out.Recipient, out.ProviderID, out.Bank, out.Account = pay.Ref, pay.Recipient, pay.ProviderID, pay.Bank, pay.Account
		out.State, out.Message = string(ledger.Ready), runs.JoinMessages("valid (dry run: nothing sent)", rowWarnings(row))
		out.Amount = pay.Amount
	} else if d, ok := ledger.AmountAsWritten(raw.Amount); ok {
		out.Amount = d
	} else {
		out.AmountText = raw.Amount
	}
	return out
}
