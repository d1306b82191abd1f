package batch

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/payout/payout/ledger"
)

// paidElsewherePrefix begins the reason of a row skipped because another file paid it.
const paidElsewherePrefix = "already paid by "

// notePaidElsewhere gives each skipped line that a run of another file paid a reason naming that
// file, its run and its day, warns about them, and returns how many there are. A row skipped by
// a rerun of the same file is the resume working as meant, and stays quiet.
func (r *Runner) notePaidElsewhere(ctx context.Context, log *slog.Logger, lines []ledger.RunRow, existing map[string]ledger.Payout, path, sum string) (int, error) {
	runs := make(map[string]ledger.Run)
	count := 0
	var first ledger.Run
	for i := range lines {
		rr := &lines[i]
		if !rr.Skipped {
			continue
		}
		runID := existing[rr.Ref].RunID
		run, ok := runs[runID]
		if !ok {
			var err error
			if run, err = r.cfg.Ledger.GetRun(ctx, runID); err != nil {
				return 0, fmt.Errorf("run %s that recorded %s: %w", runID, rr.Ref, err)
			}
			runs[runID] = run
		}
		if sameInput(run, path, sum) {
			continue
		}
		if same, err := r.sentBySameInput(ctx, rr.Ref, path, sum); err != nil {
			return 0, err
		} else if same {
			continue
		}
		if count == 0 {
			first = run
		}
		count++
		rr.Reason = joinMessages(fmt.Sprintf("%s%s in run %s on %s; not sent again", paidElsewherePrefix,
			filepath.Base(run.File), run.ID, run.StartedAt.UTC().Format(time.DateOnly)), rr.Reason)
	}
	if count > 0 {
		level := slog.LevelWarn
		if r.cfg.AllowPaidElsewhere {
			level = slog.LevelInfo
		}
		log.Log(ctx, level, "rows skipped because another file paid them: check that this is not last period's file or references",
			"rows", count, "first_paid_by", filepath.Base(first.File), "first_run", first.ID,
			"on", first.StartedAt.UTC().Format(time.DateOnly))
	}
	return count, nil
}

// sameInput reports whether an earlier run paid this same file: its input had the same SHA-256
// (the same bytes, whatever the name), or the same file name while that run had not finished
// with every row accepted (a row corrected and the file run again, or a stopped run resumed).
// Other bytes under the name of a run that had finished with everything accepted are another
// file: a new period exported under last period's name must be told, not skipped in silence.
// Folder mode's renaming of a name already taken (a ".20261124T051011Z" or ".20261124T051011Z-2"
// before the extension) is ignored, and case too.
func sameInput(run ledger.Run, path, sum string) bool {
	if run.FileSHA256 != "" && run.FileSHA256 == sum {
		return true
	}
	completed := run.Status == RunFinished && run.ExitCode == ExitOK
	return !completed && strings.EqualFold(Unstamped(run.File), Unstamped(path))
}

// stampPattern is the timestamp folder mode (package watch) puts before the extension of a name
// already taken: ".20261124T051011Z", or ".20261124T051011Z-2" and on within one second.
var stampPattern = regexp.MustCompile(`\.\d{8}T\d{6}Z(-\d+)?$`)

// Unstamped is the base name of path without folder mode's timestamp: the name its file was
// dropped under.
func Unstamped(path string) string {
	name := filepath.Base(path)
	ext := filepath.Ext(name)
	return stampPattern.ReplaceAllString(strings.TrimSuffix(name, ext), "") + ext
}

// acceptedEarlier reports whether a row in this state needs nothing more from a run.
func acceptedEarlier(s ledger.State) bool {
	return s == ledger.Submitted || s == ledger.Succeeded
}
