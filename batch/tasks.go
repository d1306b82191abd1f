package batch

import (
	"context"
	"log/slog"

	"github.com/payout/payout/batch/lookup"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/pool"
)

// feedBatch is a chunk's work for the pool: its tasks, how many of its rows need nothing more,
// or the error that stopped the feed.
type feedBatch = pool.Feed[lookup.Task]

// Pool is how a pool of this configuration runs: its rate, workers, breaker, clock and
// callbacks; throttleBreaker, when above zero, stops it after that many 429s in a row.
func (c Config) Pool(log *slog.Logger, throttleBreaker int) pool.Config {
	return pool.Config{Limiter: c.Limiter, Workers: c.Workers, BreakerThreshold: c.BreakerThreshold,
		ThrottleBreaker: throttleBreaker, Clock: c.Clock, Logger: log, Zone: c.Zone,
		Progress: c.Progress, Waiting: c.Waiting}
}

// Lookups is how this configuration looks payouts up, recording under the ledger run runID.
func (c Config) Lookups(log *slog.Logger, runID string) lookup.Config {
	return lookup.Config{Ledger: c.Ledger, Service: c.Service, Limiter: c.Limiter, Logger: log, Now: c.Now, RunID: runID,
		MaxErrors: c.MaxLookupErrors, Backoff: c.backoff(),
		Grace: outcome.Grace{Grace: max(c.UnknownGrace, c.InFlightHold), Lookups: c.NotFoundLookups, NoResend: c.NoResendUnknown}}
}

func (c Config) backoff() lookup.Backoff {
	return lookup.Backoff{Base: c.BackoffBase, Max: c.BackoffMax}
}

// newPool is a pool of the run's configuration handling each task with handle.
func (r *Runner) newPool(log *slog.Logger, handle func(context.Context, lookup.Task) lookup.Result) *pool.Pool[lookup.Task] {
	return pool.New(r.cfg.Pool(log, 0), handle)
}

// logSending logs the start of a run's sending: how many rows, at what rate, with how many workers.
func (r *Runner) logSending(log *slog.Logger, total int) {
	workers := any(r.cfg.Workers)
	if r.cfg.Workers == 0 {
		workers = "sized from the rate and the service's latency"
	}
	log.Info("recording and sending", "rows_to_pay", total, "rate", float64(r.cfg.Limiter.Limit()), "workers", workers)
}
