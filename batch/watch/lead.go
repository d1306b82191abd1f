package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/payout/payout/ledger"
)

// leadership is what a watcher sharing its inbox with other hosts (Config.Lead) knows of who leads.
type leadership struct {
	leading bool           // this watcher leads: it does until its process ends
	locked  bool           // it holds the folder's lock too
	told    ledger.Process // the other leader last logged, so that each is logged once
	busy    bool           // the folder's lock was found held, and it was logged
	// loud logs who leads as a warning: Loop's waiting is news once; a --once pass of cron on a
	// standby host is routine, logged at info (-v), so cron mails nothing.
	loud bool
}

// leads reports whether this watcher may make a pass: always without Config.Lead. With it, only
// while it leads the inbox, and holds the folder's lock, which keeps off a watcher of another
// ledger. Who leads else is logged once for each leader. A watcher that becomes the leader
// resumes first what the previous one left in processing, as at any start: its payouts are looked
// up in the ledger before anything is sent again, its process being gone.
func (w *Watcher) leads(ctx context.Context) (bool, error) {
	if w.cfg.Lead == nil {
		return true, nil
	}
	ok, leader, err := w.cfg.Lead(ctx)
	if (err != nil || !ok) && w.lead.locked {
		// It led no more (its session ended): the folder is the next leader's.
		w.lead.leading, w.lead.locked = false, false
		err = errors.Join(err, w.lock.Unlock())
	}
	if err != nil {
		return false, fmt.Errorf("watch: %w", err)
	}
	if !ok {
		if leader != w.lead.told {
			w.lead.told = leader
			level := slog.LevelInfo
			if w.lead.loud {
				level = slog.LevelWarn
			}
			w.log.Log(ctx, level, "another process leads this inbox: this one waits, and takes over once that process ends",
				"leader_host", leader.Host, "leader_pid", leader.PID, "leader_since", leader.Started)
		}
		return false, nil
	}
	if !w.lead.locked {
		err := lockFolder(w.lock, w.cfg.Dir)
		if errors.Is(err, ErrBusy) {
			if !w.lead.busy {
				w.lead.busy = true
				w.log.Warn("this process leads the inbox, but another payout watch holds the folder's lock (one of another ledger?): waiting for it", "lock", w.lock.Path())
			}
			return false, nil
		}
		if err != nil {
			return false, err
		}
		w.lead.locked = true
	}
	if !w.lead.leading {
		w.lead.leading = true
		w.log.Info("this process leads the inbox")
	}
	return true, nil
}
