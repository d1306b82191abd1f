package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/lookup"
	"github.com/payout/payout/batch/outcome"
	"github.com/payout/payout/ledger"
)

// Release makes an UNKNOWN payout READY again (outcome.Released), with its count of sends at
// zero, so that the next runs of its file send it up to outcome.MaxSendAttempts times more: a person has
// checked with the service that it holds no such payout (a stuck row, see outcome.MaxSendAttempts), and
// reason says so. actor names who decided (OS user and host); the event keeps both. The payout
// is looked up by external_invoice_ref first, with config's ledger and service: Release refuses
// while the service finds it, and when a payout known to exist is not found (lookups prove
// nothing then). A service that does not answer is an error that does not wrap outcome.ErrReleaseRefused.
func Release(ctx context.Context, config batch.Config, ref, reason, actor string) (ledger.Payout, error) {
	cfg := config.WithDefaults()
	if cfg.Ledger == nil || cfg.Service == nil {
		return ledger.Payout{}, errors.New("release: a ledger and a service are required")
	}
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return ledger.Payout{}, fmt.Errorf("%w: give --reason: what the service said when you checked", outcome.ErrReleaseRefused)
	}
	p, err := cfg.Ledger.Get(ctx, ref)
	if errors.Is(err, ledger.ErrNotFound) {
		return p, fmt.Errorf("%w: %q is not in the ledger", outcome.ErrReleaseRefused, ref)
	}
	if err != nil {
		return p, err
	}
	if err := outcome.Releasable(p); err != nil {
		return p, err
	}
	if err := cfg.Limiter.Wait(ctx); err != nil {
		return p, err
	}
	got, err := lookup.Get(ctx, cfg.Service, ref)
	switch {
	case err == nil:
		return p, fmt.Errorf("%w: the service has payout %s (invoice %s, status %s): run `payout reconcile` to record it",
			outcome.ErrReleaseRefused, ref, outcome.OrNone(got.PayoutInvoiceNo), outcome.OrNone(got.TransactionStatus))
	case api.KindOf(err) != api.KindNotFound:
		return p, fmt.Errorf("look up %s: %w", ref, outcome.ExplainAuth(err))
	}
	s := lookup.New(cfg.Lookups(cfg.Logger, ""))
	if !s.Proven(ctx) && s.Broken() {
		return p, fmt.Errorf("%w: a payout the service accepted was not found by external_invoice_ref either, so \"not found\" proves nothing on this service", outcome.ErrReleaseRefused)
	}
	err = cfg.Ledger.Apply(ctx, outcome.Released(p, actor, reason))
	if errors.Is(err, ledger.ErrStateConflict) {
		return p, fmt.Errorf("%w: payout %s changed while it was looked up: %v", outcome.ErrReleaseRefused, ref, err)
	}
	if err != nil {
		return p, err
	}
	return cfg.Ledger.Get(ctx, ref)
}
