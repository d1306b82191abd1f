package main

import (
	"io"

	"golang.org/x/time/rate"

	"github.com/payout/payout/batch/pool"
	"github.com/payout/payout/ledger"
	"github.com/payout/payout/ledger/sharedrate"
)

// newLimiter is what each request of a session waits on, at cfg.Rate with burst: on a
// PostgreSQL ledger the merchant's limit, shared through the ledger's database with every
// process on every host that pays for the same merchant on the same service (its Close ends
// the handle); on a SQLite file, which one process pays from at a time, this process's own.
func newLimiter(cfg config, burst int) (pool.Limiter, io.Closer, error) {
	if !ledger.IsURL(cfg.Ledger) {
		return rate.NewLimiter(rate.Limit(cfg.Rate), burst), nil, nil
	}
	// A handle of its own on the ledger's database: it connects when the first request waits.
	// Every worker may wait at once: each keeps its connection between requests.
	db, err := sharedrate.OpenDB(cfg.Ledger, maxConns(cfg.Workers))
	if err != nil {
		return nil, nil, configError(err)
	}
	l, err := sharedrate.New(db, sharedrate.Key(cfg.BaseURL, cfg.AuthToken), rate.Limit(cfg.Rate), burst)
	if err != nil {
		_ = db.Close()
		return nil, nil, configError(err)
	}
	return l, db, nil
}

// openLimiter gives the session its limiter (newLimiter), which close ends; when there is
// none to give, it closes the session.
func (s *session) openLimiter() error {
	var err error
	if s.limiter, s.limiterDB, err = newLimiter(s.cfg, s.o.burst.value); err != nil {
		s.close()
	}
	return err
}
