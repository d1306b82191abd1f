package pool_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/batch/pool"
)

// job is a task of the tests: a send, or a lookup that goes first.
type job struct {
	name  string
	at    time.Time
	first bool
	send  bool
	grace time.Time
}

func (j job) Due() time.Time      { return j.at }
func (j job) First() bool         { return j.first }
func (j job) Waits() bool         { return j.send }
func (j job) GraceEnd() time.Time { return j.grace }

var t0 = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)

// poolFor is a pool of one worker, no rate limit, on clock, whose tasks are handled by handle.
func poolFor(clock *batchtest.Clock, breaker int, handle func(job) pool.Result[job]) (*pool.Pool[job], *pool.Config) {
	cfg := pool.Config{Limiter: rate.NewLimiter(rate.Inf, 1), Workers: 1, BreakerThreshold: 3, ThrottleBreaker: breaker, Clock: clock}
	return pool.New(cfg, func(_ context.Context, j job) pool.Result[job] { return handle(j) }), &cfg
}

func done(j job) pool.Result[job] { return pool.Result[job]{Task: j, ServiceOK: true, RowDone: true} }

func TestPoolLooksUpUnknownOutcomesBeforeAnySend(t *testing.T) {
	var order []string
	var mu sync.Mutex
	p, _ := poolFor(batchtest.NewClock(t0), 0, func(j job) pool.Result[job] {
		mu.Lock()
		order = append(order, j.name)
		mu.Unlock()
		return done(j)
	})
	jobs := []job{{name: "send-1", at: t0.Add(-time.Hour), send: true}, {name: "send-2", at: t0.Add(-time.Hour), send: true},
		{name: "lookup", at: t0, first: true}}
	if err := p.Run(context.Background(), jobs, 0, 3, nil); err != nil {
		t.Fatal(err)
	}
	if len(order) != 3 || order[0] != "lookup" {
		t.Errorf("order %v, want the first lookup first", order)
	}
}

// TestPoolWaitsForDueTimesOnItsClock: a task due in an hour, and a 429's pause after it, go
// when the clock says so, and not before: the test advances the clock instead of sleeping.
func TestPoolWaitsForDueTimesOnItsClock(t *testing.T) {
	clock := batchtest.NewClock(t0)
	var mu sync.Mutex
	var at []time.Time
	p, _ := poolFor(clock, 0, func(j job) pool.Result[job] {
		mu.Lock()
		at = append(at, clock.Now())
		mu.Unlock()
		if j.name == "throttled" {
			return pool.Result[job]{Task: j, Throttled: true, Pause: clock.Now().Add(time.Minute),
				Next: &job{name: "again", at: clock.Now()}}
		}
		return done(j)
	})
	errc := make(chan error, 1)
	go func() {
		errc <- p.Run(context.Background(), []job{{name: "throttled", at: t0.Add(time.Hour)}}, 0, 1, nil)
	}()
	for _, step := range []time.Duration{time.Hour, time.Minute} {
		if next := clock.WaitForTimer(); !next.Equal(clock.Now().Add(step)) {
			t.Fatalf("the pool waits until %s, want %s", next, clock.Now().Add(step))
		}
		clock.Advance(step)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if len(at) != 2 || !at[0].Equal(t0.Add(time.Hour)) || !at[1].Equal(t0.Add(time.Hour+time.Minute)) {
		t.Errorf("tasks ran at %v, want at the due time and after the 429's pause", at)
	}
}

// TestPoolSaysWhatItWaitsFor: a pool with nothing to do but wait out a grace tells Waiting how
// many tasks wait until when, and tells it 0 once it works again.
func TestPoolSaysWhatItWaitsFor(t *testing.T) {
	clock := batchtest.NewClock(t0)
	end := t0.Add(2 * time.Minute)
	p, cfg := poolFor(clock, 0, done)
	var told []int
	var until time.Time
	cfg.Waiting = func(n int, u time.Time) {
		told = append(told, n)
		if n > 0 {
			until = u
		}
	}
	p = pool.New(*cfg, func(_ context.Context, j job) pool.Result[job] { return done(j) })
	errc := make(chan error, 1)
	go func() {
		errc <- p.Run(context.Background(), []job{{name: "a", at: end, grace: end}, {name: "b", at: end, grace: end}}, 0, 2, nil)
	}()
	clock.WaitForTimer()
	clock.Advance(2 * time.Minute)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if len(told) != 2 || told[0] != 2 || told[1] != 0 || !until.Equal(end) {
		t.Errorf("Waiting was told %v until %s, want 2 until %s, then 0", told, until, end)
	}
}

func TestPoolBreakers(t *testing.T) {
	fatal := errors.New("the service refused the auth token")
	for _, tc := range []struct {
		name     string
		o        pool.Result[job]
		breaker  int
		want     error
		handled  int
		wantText string
	}{
		{"failures in a row", pool.Result[job]{Failure: true}, 0, pool.ErrAborted, 3, "failed 3 times in a row"},
		{"429s in a row", pool.Result[job]{Throttled: true}, 5, pool.ErrThrottled, 5, "5 answers in a row were 429"},
		{"a fatal answer", pool.Result[job]{Fatal: fatal}, 0, fatal, 1, "auth token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := batchtest.NewClock(t0)
			handled := 0
			p, _ := poolFor(clock, tc.breaker, func(j job) pool.Result[job] {
				handled++
				o := tc.o
				o.Task, o.Next = j, &job{name: j.name, at: clock.Now()}
				return o
			})
			err := p.Run(context.Background(), []job{{name: "R1", at: t0}}, 0, 1, nil)
			if !errors.Is(err, pool.ErrAborted) || !errors.Is(err, tc.want) || handled != tc.handled {
				t.Errorf("err %v after %d tasks, want %v after %d", err, handled, tc.want, tc.handled)
			}
			if err != nil && !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("err %q does not say %q", err, tc.wantText)
			}
		})
	}
}

func TestPoolStopsOnSignal(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("interrupt")
	handled := 0
	p, _ := poolFor(batchtest.NewClock(t0), 0, func(j job) pool.Result[job] {
		handled++
		cancel(stop)
		return done(j)
	})
	jobs := []job{{name: "A", at: t0, send: true}, {name: "B", at: t0, send: true}, {name: "C", at: t0, send: true}}
	err := p.Run(ctx, jobs, 0, 3, nil)
	if !errors.Is(err, pool.ErrAborted) || !errors.Is(err, stop) || handled != 1 {
		t.Errorf("err %v after %d tasks; want the signal after 1", err, handled)
	}
}

// TestPoolStoppedWhileItDrainsEndsAborted: a stop that comes while work is ready at the same
// moment (a chunk to take, a task for an idle worker) ends the run aborted, whatever select would
// choose among them; the row not sent is left for a rerun.
func TestPoolStoppedWhileItDrainsEndsAborted(t *testing.T) {
	for range 500 {
		ctx, cancel := context.WithCancelCause(context.Background())
		stop := errors.New("interrupt")
		_, cfg := poolFor(batchtest.NewClock(t0), 0, done)
		// The first row done stops the run, with the worker idle again and the next chunk waiting.
		cfg.Progress = func(n, _ int) {
			if n == 1 {
				cancel(stop)
			}
		}
		p := pool.New(*cfg, func(_ context.Context, j job) pool.Result[job] { return done(j) })
		feed := make(chan pool.Feed[job], 1)
		feed <- pool.Feed[job]{Tasks: []job{{name: "B", at: t0, send: true}}}
		close(feed)
		err := p.Run(ctx, []job{{name: "A", at: t0, send: true}}, 0, 2, feed)
		if !errors.Is(err, pool.ErrAborted) || !errors.Is(err, stop) {
			t.Fatalf("err %v, want the run aborted by its stop", err)
		}
	}
}

// pausingLimiter is a limiter shared with other processes, as the pool sees one: it lets every
// request go, and records the pauses it is told of; or it fails every Wait with err.
type pausingLimiter struct {
	mu     sync.Mutex
	pauses []time.Duration
	err    error
}

func (l *pausingLimiter) Wait(context.Context) error { return l.err }
func (l *pausingLimiter) Limit() rate.Limit          { return rate.Inf }
func (l *pausingLimiter) Pause(_ context.Context, d time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pauses = append(l.pauses, d)
	return nil
}

// TestPoolTellsASharedLimiterOfA429: a 429's Retry-After pauses the limiter every process waits
// on, for as long as the answer said, and the pool itself as before.
func TestPoolTellsASharedLimiterOfA429(t *testing.T) {
	clock := batchtest.NewClock(t0)
	lim := &pausingLimiter{}
	var at []time.Time
	cfg := pool.Config{Limiter: lim, Workers: 1, BreakerThreshold: 3, Clock: clock}
	p := pool.New(cfg, func(_ context.Context, j job) pool.Result[job] {
		at = append(at, clock.Now())
		if j.name == "throttled" {
			return pool.Result[job]{Task: j, Throttled: true, Pause: clock.Now().Add(30 * time.Second),
				Next: &job{name: "again", at: clock.Now()}}
		}
		return done(j)
	})
	errc := make(chan error, 1)
	go func() { errc <- p.Run(context.Background(), []job{{name: "throttled", at: t0}}, 0, 1, nil) }()
	if next := clock.WaitForTimer(); !next.Equal(t0.Add(30 * time.Second)) {
		t.Errorf("the pool itself waits until %s, want %s", next, t0.Add(30*time.Second))
	}
	clock.Advance(30 * time.Second)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if len(lim.pauses) != 1 || lim.pauses[0] != 30*time.Second || len(at) != 2 {
		t.Errorf("the limiter was paused %v with %d tasks run, want once for 30s, and 2 tasks", lim.pauses, len(at))
	}
}

// TestPoolStopsWhenItsLimiterFails: a limiter that cannot pace a request (a shared one whose
// database does not answer) stops the run before the request goes, saying why.
func TestPoolStopsWhenItsLimiterFails(t *testing.T) {
	down := errors.New("the database does not answer")
	handled := 0
	cfg := pool.Config{Limiter: &pausingLimiter{err: down}, Workers: 1, BreakerThreshold: 3, Clock: batchtest.NewClock(t0)}
	p := pool.New(cfg, func(_ context.Context, j job) pool.Result[job] {
		handled++
		return done(j)
	})
	err := p.Run(context.Background(), []job{{name: "A", at: t0, send: true}, {name: "B", at: t0, send: true}}, 0, 2, nil)
	if !errors.Is(err, pool.ErrAborted) || !errors.Is(err, down) || handled != 0 {
		t.Errorf("err %v after %d tasks sent, want the limiter's error before any", err, handled)
	}
}
