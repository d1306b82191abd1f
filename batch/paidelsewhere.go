package batch

import (
	"path/filepath"
	"regexp"
	"strings"

	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/runid"
	"github.com/payout/payout/ledger"
)

// paidElsewherePrefix begins the reason of a row skipped because another file paid it.
const paidElsewherePrefix = "already paid by "

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
	return !Completed(run) && strings.EqualFold(Unstamped(run.File), Unstamped(path))
}

// Completed reports whether run is a run of a file that finished with every row accepted (exit
// 0): the one test, for the run and folder mode, of a file paid whole.
func Completed(run ledger.Run) bool {
	return run.Kind == ledger.KindRun && run.Status == ledger.RunFinished && run.ExitCode == exitcode.OK
}

// stampPattern is the timestamp folder mode (package watch) puts before the extension of a name
// already taken: ".20261124T051011Z", or ".20261124T051011Z-2" and on within one second.
var stampPattern = regexp.MustCompile(`\.` + runid.StampPattern + `(-\d+)?$`)

// Unstamped is the base name of path without folder mode's timestamp: the name its file was
// dropped under.
func Unstamped(path string) string {
	name := filepath.Base(path)
	ext := filepath.Ext(name)
	return stampPattern.ReplaceAllString(strings.TrimSuffix(name, ext), "") + ext
}
