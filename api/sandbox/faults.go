package sandbox

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// Faults are the injected faults. Rates are shares in [0, 1], drawn from a generator seeded by
// Options.Seed, so a sequence of requests sees the same faults on every run.
type Faults struct {
	Latency       time.Duration // added to every API request
	LatencyJitter time.Duration // plus a seeded random share of this
	// ErrorRate is the share of API requests answered 503 before anything is done (nothing created).
	ErrorRate float64
	// LostResponseRate is the share of valid creates whose payout IS created but whose response
	// never arrives: the connection is closed without an answer.
	LostResponseRate float64
	// RateLimit is the number of requests per second (a window of one second of Options.Now) above
	// which the sandbox answers 429 with Retry-After. 0: no limit.
	RateLimit float64
	// ThrottleLookups is the share of Get Payout requests answered 429, whatever the rate, with
	// a Retry-After of ThrottleRetryAfter (whole seconds; 0 sends "Retry-After: 0").
	ThrottleLookups    float64
	ThrottleRetryAfter time.Duration
	// ThrottleRate is the share of API requests of any endpoint answered 429 with a Retry-After
	// of ThrottleRetryAfter, whatever the rate: a front end shedding load now and then.
	ThrottleRate float64
	// FailAfterCreateRate is the share of valid creates whose payout IS created but which are
	// answered HTTP 200 with a fail envelope, as a refusal: the service contradicting itself.
	FailAfterCreateRate float64
}

// faultDraw is what the injected faults decided for one API request.
type faultDraw struct {
	down, limited, throttled, injected bool
	delay                              time.Duration
	retryAfter                         time.Duration // sent with a throttled answer
}

// drawFaults counts the request and draws its faults, in the order a real front end would meet
// them.
func (s *Server) drawFaults(endpoint string) faultDraw {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Requests[endpoint]++
	f := s.faults
	d := faultDraw{down: s.down, retryAfter: f.ThrottleRetryAfter}
	d.limited = s.countLocked() && !d.down // a service that is down does not rate limit
	d.throttled = !d.limited && !d.down && s.throttledLocked(f, endpoint)
	if !d.limited && !d.down {
		d.delay = f.Latency
		if f.LatencyJitter > 0 {
			d.delay += time.Duration(s.rng.Int64N(int64(f.LatencyJitter)))
		}
		d.injected = f.ErrorRate > 0 && s.rng.Float64() < f.ErrorRate
	}
	switch {
	case d.limited, d.throttled:
		s.stats.RateLimited++
	case d.down || d.injected:
		s.stats.ServerErrors++
	}
	return d
}

// answerFault answers a request that its faults end and reports whether they did. A request whose
// client goes away during the injected latency ends without an answer.
func (s *Server) answerFault(w http.ResponseWriter, r *http.Request, uuid string, d faultDraw) bool {
	switch {
	case d.down:
		s.fail(w, uuid, http.StatusServiceUnavailable, CodeUnavailable, "service unavailable", "")
	case d.limited:
		w.Header().Set("Retry-After", "1")
		s.fail(w, uuid, http.StatusTooManyRequests, CodeRateLimited, "too many requests", "")
	case d.throttled:
		w.Header().Set("Retry-After", strconv.Itoa(int(d.retryAfter/time.Second)))
		s.fail(w, uuid, http.StatusTooManyRequests, CodeRateLimited, "too many requests", "")
	case d.delay > 0 && !s.sleep(r.Context(), d.delay):
		// The client went away while waiting: nobody is left to answer.
	case d.injected:
		s.fail(w, uuid, http.StatusServiceUnavailable, CodeUnavailable, "service temporarily unavailable", "")
	default:
		return false
	}
	return true
}

// countLocked counts the request in its one-second window and reports whether it is over the
// rate limit.
func (s *Server) countLocked() bool {
	now := s.now()
	sec := now.Unix()
	if sec != s.window {
		s.window, s.inWindow = sec, 0
	}
	s.inWindow++
	s.stats.MaxPerSecond = max(s.stats.MaxPerSecond, s.inWindow)
	s.countRecentLocked(now)
	if s.faults.RateLimit <= 0 {
		return false
	}
	return float64(s.inWindow) > s.faults.RateLimit
}

// countRecentLocked keeps the arrivals of the last second, (now-1s, now], and the most of them
// ever seen at once.
func (s *Server) countRecentLocked(now time.Time) {
	cut := now.Add(-time.Second)
	old := 0
	for old < len(s.recent) && !s.recent[old].After(cut) {
		old++
	}
	s.recent = append(s.recent[old:], now)
	s.stats.MaxInAnySecond = max(s.stats.MaxInAnySecond, len(s.recent))
}

// throttledLocked draws whether a request is answered 429 whatever the rate.
func (s *Server) throttledLocked(f Faults, endpoint string) bool {
	if endpoint == "get" && f.ThrottleLookups > 0 && s.rng.Float64() < f.ThrottleLookups {
		return true
	}
	return f.ThrottleRate > 0 && s.rng.Float64() < f.ThrottleRate
}

func (s *Server) sleep(ctx context.Context, d time.Duration) bool {
	var over <-chan time.Time
	if s.opts.After != nil {
		over = s.opts.After(d)
	} else {
		t := time.NewTimer(d)
		defer t.Stop()
		over = t.C
	}
	select {
	case <-over:
		return true
	case <-ctx.Done():
		return false
	case <-s.ctx.Done():
		return true
	}
}
