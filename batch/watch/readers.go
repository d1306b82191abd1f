package watch

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/payout/payout/batch/atomicfile"
	"github.com/payout/payout/batch/untrusted"
)

// What folder mode writes for the people who drop files (notes, reports, retry files, the list
// of what waits) is readable by the group of the folder it lands in when that folder is itself
// group-readable: the README gives the folders to the finance group, set-group-ID so that new
// files take that group. It is never readable by others: notes and reports quote account numbers.
const (
	privateMode fs.FileMode = 0o600
	sharedMode  fs.FileMode = 0o640
)

// readerMode is the mode of a file written for people into dir.
func readerMode(dir string) fs.FileMode {
	if info, err := os.Stat(dir); err == nil && info.Mode().Perm()&0o040 != 0 {
		return sharedMode
	}
	return privateMode
}

// writeNote writes a note for people, atomically, readable as readerMode says.
func writeNote(path, text string) error {
	return atomicfile.WriteBytes(path, readerMode(filepath.Dir(path)), []byte(text))
}

// shareWithFolder makes a file the run wrote (0600) as readable as readerMode says for its folder.
func (w *Watcher) shareWithFolder(paths ...string) {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if err := os.Chmod(p, readerMode(filepath.Dir(p))); err != nil {
			w.log.Warn("could not open a report to the folder's readers", "file", p, "err", err)
		}
	}
}

// droppedBySuffix names, in reports/, the note of who dropped a file's bytes through the web
// console: reports/ is the service account's alone, so nobody who drops files can write it.
const droppedBySuffix = ".dropped-by.txt"

// DroppedByNote is where the web console records the principals who dropped the bytes whose
// SHA-256 is sum into the folder dir.
func DroppedByNote(dir, sum string) string {
	return filepath.Join(dir, ReportsDir, sum+droppedBySuffix)
}

// Makers is batch.Config.Makers for the folder dir: the principals DroppedByNote names, whose
// signatures do not count among the approvals of the file they dropped.
func Makers(dir string) func(sum string) []string {
	return func(sum string) []string {
		b, err := untrusted.ReadSmall(DroppedByNote(dir, sum), 64<<10)
		if err != nil {
			return nil
		}
		return strings.Fields(string(b))
	}
}

// HeldForRepeats says whether the file at path waits in awaiting-approval for signers to accept
// its rows held as possible repeats, as its note says: the console offers to accept them.
func HeldForRepeats(path string) bool {
	b, err := untrusted.ReadSmall(path+WhySuffix, 64<<10)
	first, _, _ := strings.Cut(string(b), "\n")
	return err == nil && strings.Contains(first, heldMark)
}
