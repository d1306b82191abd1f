package watch

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/payout/payout/batch/runid"
	"github.com/payout/payout/batch/runs"
	"github.com/payout/payout/batch/words"
)

// RefusedSuffix ends the report of a file refused as a whole (exit 3 before any row was
// recorded): `<name>.<run id>.refused.txt` in the report folder, beside the reports of paid files.
const RefusedSuffix = ".refused.txt"

// Bounds of the lines a refused CSV file's report quotes: enough to see what the file held.
const (
	refusedLinesShown = 50
	refusedLineChars  = 200
)

// writeRefusedReport writes the report of a file refused as a whole, now at out.Path: what it
// was, why it was refused and, for a CSV, its first lines as read; it returns the report's path.
func (w *Watcher) writeRefusedReport(out *FileOutcome, note string) (string, error) {
	res := out.Result
	base := strings.TrimSuffix(runs.Unstamped(out.Name), filepath.Ext(out.Name))
	id := res.RunID
	if id == "" {
		id = runid.Stamp(w.cfg.Now())
	}
	path := filepath.Join(w.cfg.ReportDir, base+"."+id+RefusedSuffix)
	zone := w.runner.Config().Zone
	var b strings.Builder
	b.WriteString("Payout file REFUSED: nothing of it was recorded in the ledger or sent.\n\n")
	fmt.Fprintf(&b, "File:       %s\n", absolute(out.Path))
	if res.SHA256 != "" {
		fmt.Fprintf(&b, "SHA-256:    %s\n", res.SHA256)
	}
	if info, err := os.Stat(out.Path); err == nil {
		fmt.Fprintf(&b, "Size:       %d bytes\n", info.Size())
	}
	when := res.StartedAt
	if when.IsZero() {
		when = w.cfg.Now()
	}
	fmt.Fprintf(&b, "Refused:    %s", words.FormatTime(when, zone))
	if res.RunID != "" {
		fmt.Fprintf(&b, " (run %s)", res.RunID)
	}
	b.WriteString("\n\n")
	b.WriteString(note)
	if strings.EqualFold(filepath.Ext(out.Name), ".csv") {
		writeLinesAsRead(&b, out.Path)
	}
	if err := writeNote(path, b.String()); err != nil {
		return "", fmt.Errorf("watch: write the refused file's report: %w", err)
	}
	return path, nil
}

// writeLinesAsRead quotes the first lines of a text file, numbered, each cut to a readable length.
func writeLinesAsRead(b *strings.Builder, path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	fmt.Fprintf(b, "\nThe file's first lines as read (at most %d):\n", refusedLinesShown)
	n := 0
	for ; sc.Scan(); n++ {
		if n == refusedLinesShown {
			b.WriteString("  ... and more\n")
			return
		}
		line := strings.TrimSuffix(sc.Text(), "\r")
		if utf8.RuneCountInString(line) > refusedLineChars {
			line = string([]rune(line)[:refusedLineChars]) + " ..."
		}
		if !utf8.ValidString(line) {
			line = fmt.Sprintf("%q (not UTF-8)", line)
		}
		fmt.Fprintf(b, "  %5d  %s\n", n+1, line)
	}
	if n == 0 {
		b.WriteString("  (none)\n")
	}
}
