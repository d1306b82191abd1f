package watch

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/payout/payout/batch/words"
)

// WaitingList is the file in awaiting-approval that lists, for the people who sign and those who
// wait on them, every file waiting there and what it waits for; each pass rewrites it when that
// changed, and it says so when nothing waits.
const WaitingList = "WAITING.txt"

// waitingLinesShown bounds what the list says of one file: its note has the rest.
const waitingLinesShown = 6

// writeWaitingList rewrites awaiting-approval's WaitingList from the files waiting there and the
// notes beside them.
func (w *Watcher) writeWaitingList() error {
	names, err := w.awaitingFiles()
	if err != nil {
		return err
	}
	var b strings.Builder
	if len(names) == 0 {
		b.WriteString("Nothing is waiting for approval.\n")
	} else {
		fmt.Fprintf(&b, "%d file(s) waiting for approval, oldest first. Each file's %s note beside it says how to sign it.\n", len(names), WhySuffix)
	}
	type waiting struct {
		name  string
		since time.Time
		lines []string
	}
	var list []waiting
	for _, name := range names {
		path := filepath.Join(w.dir(AwaitingDir), name)
		wt := waiting{name: name}
		if info, err := os.Stat(path + WhySuffix); err == nil {
			wt.since = info.ModTime()
			wt.lines = noteHead(path + WhySuffix)
		} else if info, err := os.Stat(path); err == nil {
			wt.since = info.ModTime()
		}
		list = append(list, wt)
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].since.Before(list[j].since) })
	for _, wt := range list {
		fmt.Fprintf(&b, "\n%s\n  waiting since %s\n", wt.name, words.FormatTime(wt.since, w.runner.Config().Zone))
		for _, line := range wt.lines {
			fmt.Fprintf(&b, "  %s\n", strings.TrimSpace(line))
		}
	}
	return rewriteNote(filepath.Join(w.dir(AwaitingDir), WaitingList), b.String())
}

// noteHead is what a waiting file's note says it waits for: its lines up to "What to do:",
// without the first, which names the file, and without blank lines.
func noteHead(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for first := true; sc.Scan(); first = false {
		line := sc.Text()
		if strings.HasPrefix(line, "What to do:") {
			break
		}
		if first {
			_, rest, ok := strings.Cut(line, ": ")
			if !ok {
				continue
			}
			line = rest
		}
		if strings.TrimSpace(line) != "" {
			lines = append(lines, line)
		}
		if len(lines) == waitingLinesShown {
			lines = append(lines, "... (the note has the rest)")
			break
		}
	}
	return lines
}
