package batch

import (
	"context"
	"log/slog"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/lookup"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/batch/pool"
	"github.com/payout/payout/batch/send"
)

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

// sender is how this configuration sends (package send).
func (c Config) sender() send.Config {
	return send.Config{Ledger: c.Ledger, Service: c.Service, Pool: c.Pool(c.Logger, 0), Lookups: c.Lookups(c.Logger, ""),
		Request: api.CreatePayoutRequest{VirtualPoolReference: c.VirtualPoolRef, ClientRedirectURL: c.RedirectURL,
			ClientCallbackURL: c.CallbackURL},
		Process: c.Process, Liveness: c.Liveness, Fence: c.Fence, InFlightHold: c.InFlightHold, Journal: c.Journal,
		AllowedSigners: c.Approval.AllowedSigners, AfterIntent: c.AfterIntent, BeforePost: c.BeforePost, State: c.sendState}
}

// RecoverInterrupted marks rows left SUBMITTING by a process that died between recording its
// intent and recording the answer (send.Recover): their POST may or may not have reached the
// service. Rows whose process the configuration's Liveness says still runs are that process's
// to finish; so are this process's own while one of its runs is sending.
func (c Config) RecoverInterrupted(ctx context.Context, runID string) error {
	return send.Recover(ctx, c.WithDefaults().sender(), runID)
}

// logSending logs the start of a run's sending: how many rows, at what rate, with how many workers.
func (r *Runner) logSending(log *slog.Logger, total int) {
	workers := any(r.cfg.Workers)
	if r.cfg.Workers == 0 {
		workers = "sized from the rate and the service's latency"
	}
	log.Info("recording and sending", "rows_to_pay", total, "rate", float64(r.cfg.Limiter.Limit()), "workers", workers)
}
