package batch

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"

	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/intake"
	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/ledger"
)

// dryRun checks the file and writes its reports in one pass, as rows are read: nothing is
// recorded or sent. A file with duplicate references is read a second time.
func (r *Runner) dryRun(ctx context.Context, log *slog.Logger, res Result, opts intake.Options) (Result, error) {
	dry := intake.NewDryRun(opts, res.SHA256)
	for {
		var sv *intake.Survey
		meta := report.Summary{RunID: res.RunID, Kind: string(ledger.KindDryRun), File: res.File, FileSHA256: res.SHA256,
			Started: res.StartedAt, DryRun: true, Zone: r.cfg.Zone}
		paths, summary, err := report.WriteRunStream(r.cfg.ReportDir, filepath.Base(res.File), meta, func(add func(report.Row) error) error {
			var err error
			sv, err = dry.Pass(ctx, add)
			return err
		})
		if errors.Is(err, intake.ErrDuplicatesFound) {
			continue
		}
		if err != nil {
			return res, err
		}
		if err := sv.SameFile(res.SHA256); err != nil {
			return res, err
		}
		log.Info("file validated", "rows", sv.Rows(), "rejected", sv.Rejected())
		res.Problems, res.Warnings = sv.Problems(), sv.Warnings()
		res = tally(res, summary)
		res.ExitCode = dryRunExit(res.Rejected, r.cfg.AllowPartial)
		res.EndedAt = r.cfg.Now().UTC()
		res.Reports = paths.List()
		// A dry run shows the plan a signature binds, and what the run would miss of the signatures
		// the policy asks for.
		_, err = r.checkApproval(ctx, &res, sv.Plan())
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
