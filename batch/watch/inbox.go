package watch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/payout/payout/batch/approval"
)

// observation is an inbox file as last seen. since is when it was first seen with this size and time.
type observation struct {
	size  int64
	mod   time.Time
	since time.Time
}

// partialName reports names that editors, browsers and copy tools give files they are still
// writing, or keep beside an open one. They are never claimed, and not worth a warning.
func partialName(name string) bool {
	lower := strings.ToLower(name)
	if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "~$") {
		return true
	}
	for _, suffix := range []string{".tmp", ".part", ".crdownload", ".swp", ".partial", ".download", "~"} {
		if strings.HasSuffix(lower, suffix) {
			return true
		}
	}
	return false
}

func payableName(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".csv" || ext == ".xlsx"
}

type candidate struct {
	name string
	obs  observation
}

// scanInbox records what it sees and returns the files that have held still for the settle time,
// oldest first.
func (w *Watcher) scanInbox() ([]candidate, error) {
	entries, err := os.ReadDir(w.dir(InboxDir))
	if err != nil {
		return nil, fmt.Errorf("watch: read inbox: %w", err)
	}
	now := w.cfg.Now()
	present := make(map[string]bool, len(entries))
	var due []candidate
	for _, e := range entries {
		name := e.Name()
		if partialName(name) {
			continue
		}
		present[name] = true
		if !e.Type().IsRegular() {
			w.warnOnce(name, "not a regular file: left in the inbox")
			continue
		}
		if !payableName(name) {
			// A signature or a refusal waits beside its file and moves with it.
			if !strings.HasSuffix(name, approval.SigSuffix) && !strings.HasSuffix(name, approval.RefusalSuffix) {
				w.warnOnce(name, "not a .csv or .xlsx file: left in the inbox; save it as CSV or XLSX to have it paid")
			}
			continue
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("watch: inbox: %w", err)
		}
		obs, ok := w.seen[name]
		if !ok || obs.size != info.Size() || !obs.mod.Equal(info.ModTime()) {
			obs = observation{size: info.Size(), mod: info.ModTime(), since: now}
			w.seen[name] = obs
		}
		if now.Sub(obs.since) >= w.settleFor(obs) {
			due = append(due, candidate{name: name, obs: obs})
		}
	}
	for name := range w.seen {
		if !present[name] {
			delete(w.seen, name)
		}
	}
	for name := range w.warned {
		if !present[name] {
			delete(w.warned, name)
		}
	}
	sort.Slice(due, func(i, j int) bool {
		if !due[i].obs.mod.Equal(due[j].obs.mod) {
			return due[i].obs.mod.Before(due[j].obs.mod)
		}
		return due[i].name < due[j].name
	})
	return due, nil
}

func (w *Watcher) warnOnce(name, msg string) {
	if !w.warned[name] {
		w.warned[name] = true
		w.log.Warn(msg, "file", name)
	}
}

// settleWait is how long until the first file seen but not yet settled may be claimed.
func (w *Watcher) settleWait() (time.Duration, bool) {
	if len(w.seen) == 0 {
		return 0, false
	}
	var first time.Time
	for _, obs := range w.seen {
		if due := obs.since.Add(w.settleFor(obs)); first.IsZero() || due.Before(first) {
			first = due
		}
	}
	return first.Sub(w.cfg.Now()), true
}

// settleFor is how long a file must hold still before it is claimed. An empty one waits at least
// DefaultSettle even when the settle time is shorter: copy tools create a file before they write
// it, and an empty file is failed, not paid.
func (w *Watcher) settleFor(obs observation) time.Duration {
	if obs.size == 0 && w.cfg.Settle < DefaultSettle {
		return DefaultSettle
	}
	return w.cfg.Settle
}

// claim moves a settled file into processing, unless it changed since it was seen. A rename within
// one file system is atomic: the file is in exactly one folder at any moment.
func (w *Watcher) claim(c candidate) (string, bool, error) {
	src := filepath.Join(w.dir(InboxDir), c.name)
	info, err := os.Lstat(src)
	if errors.Is(err, fs.ErrNotExist) {
		delete(w.seen, c.name)
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("watch: inbox: %w", err)
	}
	if info.Size() != c.obs.size || !info.ModTime().Equal(c.obs.mod) {
		w.seen[c.name] = observation{size: info.Size(), mod: info.ModTime(), since: w.cfg.Now()}
		return "", false, nil
	}
	target := w.freeName(c.name, ProcessingDir, DoneDir, FailedDir, AwaitingDir)
	if err := os.Rename(src, filepath.Join(w.dir(ProcessingDir), target)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			delete(w.seen, c.name)
			return "", false, nil
		}
		return "", false, fmt.Errorf("watch: claim %s: %w", c.name, err)
	}
	if err := w.moveSignatures(InboxDir, c.name, ProcessingDir, target); err != nil {
		return "", false, err
	}
	delete(w.seen, c.name)
	w.log.Info("file claimed", "file", c.name, "as", target, "bytes", c.obs.size)
	return target, true, nil
}
