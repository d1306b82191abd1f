package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// processStart anchors bootNow where the system has no boot clock.
var processStart = time.Now()

// leaseTTL is how long after a round trip on the hold's session was sent the process may still
// start a request that creates a payout (Confirm). The server ends a session only after
// keepIdle + keepCount × keepInterval (20 s) without a word from its host, or when it is killed
// or restarted; until then no other process can take this one's claims over. A request started
// within leaseTTL of a round trip the server answered therefore leaves while the claim is held,
// or within leaseTTL of the session's end when the server itself ended it: the in-flight hold of
// a process that takes claims over (README, "Several hosts") is many times that.
const leaseTTL = 5 * time.Second

// ErrClaimLost is returned by Confirm once the process cannot prove it holds its claims: its
// session is gone, did not answer within leaseTTL, or answered too long ago (the process was
// paused). Nothing may be sent; whoever takes the claims over looks the payouts up first.
var ErrClaimLost = errors.New("this process cannot prove it still holds its claims on the ledger")

// renewal is one round trip on the hold's session that the callers of Confirm wait for.
type renewal struct {
	sent time.Duration // bootNow when it was sent
	err  error
	done chan struct{}
}

// Confirm proves that the process still holds its claims: it waits for a round trip on the
// hold's own session that was sent after the call, and checks on the boot clock that it was
// sent less than leaseTTL ago. A pause of the process (SIGSTOP, a suspended or migrated
// machine) before that check makes it fail, as does a session the server ended. Callers that
// arrive together share one round trip, so that every worker's proof costs at most one round
// trip of waiting and the session carries one ping at a time, whatever the rate.
func (h *pgHold) Confirm(ctx context.Context) error {
	h.leaseMu.Lock()
	if h.nextRenewal == nil {
		h.nextRenewal = &renewal{done: make(chan struct{})}
	}
	r := h.nextRenewal
	if !h.renewing {
		h.renewing = true
		go h.renew()
	}
	h.leaseMu.Unlock()
	wait := time.NewTimer(2 * leaseTTL)
	defer wait.Stop()
	select {
	case <-r.done:
	case <-ctx.Done():
		return ctx.Err()
	case <-wait.C:
		return fmt.Errorf("%w: its session did not answer within %s", ErrClaimLost, 2*leaseTTL)
	}
	if r.err != nil {
		return r.err
	}
	if age := bootNow() - r.sent; age >= leaseTTL {
		return fmt.Errorf("%w: the ledger last answered %s ago (was this process or its machine paused?)", ErrClaimLost, age.Round(time.Millisecond))
	}
	return nil
}

// renew sends the round trips callers wait for, one at a time, until none is asked for.
func (h *pgHold) renew() {
	for {
		h.leaseMu.Lock()
		r := h.nextRenewal
		h.nextRenewal = nil
		if r == nil {
			h.renewing = false
			h.leaseMu.Unlock()
			return
		}
		h.leaseMu.Unlock()
		r.err = h.roundTrip(r)
		close(r.done)
	}
}

// roundTrip pings the hold's session within leaseTTL. A session that does not answer in time is
// given up (pgx closes a connection whose query it abandons), which releases its locks: the
// process is gone for everyone else, and stops.
func (h *pgHold) roundTrip(r *renewal) error {
	select {
	case <-h.lost:
		return fmt.Errorf("%w: its session is gone", ErrClaimLost)
	default:
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.shut {
		return fmt.Errorf("%w: the ledger's hold is closed", ErrClaimLost)
	}
	ctx, cancel := context.WithTimeout(context.Background(), leaseTTL)
	defer cancel()
	r.sent = bootNow()
	if err := h.conn.Ping(ctx); err != nil {
		h.markLost()
		return fmt.Errorf("%w: its session did not answer: %v", ErrClaimLost, err)
	}
	h.renewed(r.sent)
	return nil
}

// renewed records that a round trip sent at sent (bootNow) was answered: the lease Held checks.
func (h *pgHold) renewed(sent time.Duration) {
	h.leaseMu.Lock()
	h.lastAnswered = max(h.lastAnswered, sent)
	h.leaseMu.Unlock()
}

// Held reports whether a round trip on the hold's session sent less than leaseTTL ago (on the
// boot clock) was answered, and the session has not been found gone since: the heartbeat's
// round trips renew it, Confirm's too.
func (h *pgHold) Held() bool {
	select {
	case <-h.lost:
		return false
	default:
	}
	h.leaseMu.Lock()
	last := h.lastAnswered
	h.leaseMu.Unlock()
	return last > 0 && bootNow()-last < leaseTTL
}

// markLost closes Lost, once.
func (h *pgHold) markLost() {
	h.lostOnce.Do(func() { close(h.lost) })
}
