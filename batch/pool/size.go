package pool

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Sizing of a pool whose Config.Workers is 0. A worker sends one request at a time, so at the
// rate r and a time t per request the pool needs r×t workers (Little's law): fewer cap the rate
// whatever the limiter allows. The pool starts small and grows toward that need, measured, with a
// margin; it never shrinks, since idle workers cost nothing the service sees. The limiter alone
// decides the rate.
const (
	AutoStartWorkers = 4
	// AutoMaxWorkers bounds the pool at a finite rate; AutoUnlimitedWorkers is its size at rate
	// inf, where no need can be computed.
	AutoMaxWorkers       = 64
	AutoUnlimitedWorkers = 32
	// sizeAfterAnswers answers are timed before the pool first grows, so that one slow first
	// request (a connection being set up) does not size it; tooFewAfterAnswers before an
	// explicit number of workers is said to be too few.
	sizeAfterAnswers   = 4
	tooFewAfterAnswers = 20
	// latencyWeight is the weight of the newest answer in the moving average of a request's time.
	latencyWeight = 0.2
	sizeMargin    = 1.25
)

// sizer keeps the moving average of the time a worker spends on one task (the request and the
// recording of its answer) and says when the pool should grow. Only the pool's loop uses it.
type sizer struct {
	log      *slog.Logger
	limit    rate.Limit
	explicit bool // Config.Workers was set: never grown, said once when too few
	workers  int
	max      int
	latency  time.Duration
	answers  int
	grown    bool
	said     bool
}

func newSizer(cfg Config, log *slog.Logger) *sizer {
	s := &sizer{log: log, limit: cfg.Limiter.Limit(), workers: cfg.Workers, explicit: cfg.Workers > 0}
	if !s.explicit {
		s.workers, s.max = AutoStartWorkers, AutoMaxWorkers
		if s.limit == rate.Inf {
			s.max = AutoUnlimitedWorkers
		}
	}
	return s
}

// observe takes the time one task took (0: nothing was sent) and returns how many workers to add.
func (s *sizer) observe(took time.Duration) int {
	if took <= 0 {
		return 0
	}
	s.answers++
	switch {
	case s.answers == 1:
		s.latency = took
	case s.answers <= sizeAfterAnswers:
		// The quickest of the first answers: one that set up a connection says little of the
		// others, and a pool sized short still grows later.
		s.latency = min(s.latency, took)
	default:
		s.latency += time.Duration(latencyWeight * float64(took-s.latency))
	}
	if s.explicit {
		if s.answers >= tooFewAfterAnswers && !s.said {
			s.sayTooFew()
		}
		return 0
	}
	if s.answers < sizeAfterAnswers {
		return 0
	}
	want := s.need()
	if want <= s.workers {
		return 0
	}
	add := want - s.workers
	s.workers, s.grown = want, true
	s.log.Debug("pool grown", "workers", s.workers, "latency_ms", s.latency.Milliseconds())
	return add
}

// need is the number of workers that keep up with the rate at the measured latency, with a
// margin for its variation, within the bound.
func (s *sizer) need() int {
	if s.limit == rate.Inf {
		return s.max
	}
	return min(workersFor(float64(s.limit), s.latency), s.max)
}

func workersFor(perSecond float64, latency time.Duration) int {
	return int(math.Ceil(perSecond*latency.Seconds()*sizeMargin)) + 1
}

// sayTooFew warns, once, when an explicit number of workers cannot reach the rate at the
// latency measured so far.
func (s *sizer) sayTooFew() {
	s.said = true
	if s.limit == rate.Inf || float64(s.workers) >= float64(s.limit)*s.latency.Seconds() {
		return
	}
	most := float64(s.workers) / s.latency.Seconds()
	want := workersFor(float64(s.limit), s.latency)
	s.log.Warn(fmt.Sprintf("%d workers can send at most %s/s at the service's observed latency of %d ms; --rate is %s/s: raise --workers to %d or leave it unset",
		s.workers, perSecond(most), s.latency.Milliseconds(), perSecond(float64(s.limit)), want),
		"workers", s.workers, "latency_ms", s.latency.Milliseconds(), "rate", float64(s.limit), "suggested_workers", want)
}

// report says, at the end of the pool's work, what size it grew to and why.
func (s *sizer) report() {
	if !s.grown {
		return
	}
	rateText := "inf"
	if s.limit != rate.Inf {
		rateText = perSecond(float64(s.limit)) + "/s"
	}
	s.log.Info(fmt.Sprintf("workers: the pool grew to %d for --rate %s at the service's observed latency of %d ms",
		s.workers, rateText, s.latency.Milliseconds()), "workers", s.workers, "latency_ms", s.latency.Milliseconds())
}

func perSecond(v float64) string {
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

// workerGroup is the pool's running workers: each takes tasks from work, one at a time, and
// sends its outcome to results.
type workerGroup[T Task] struct {
	p       *Pool[T]
	ctx     context.Context
	work    chan T
	results chan<- Result[T]
	wg      sync.WaitGroup
}

// add starts n more workers.
func (g *workerGroup[T]) add(n int) {
	for range n {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			for t := range g.work {
				g.results <- g.p.do(g.ctx, t)
			}
		}()
	}
}

// stop closes work and waits for the workers to finish.
func (g *workerGroup[T]) stop() {
	close(g.work)
	g.wg.Wait()
}

// startWorkers starts n workers that do the tasks of work and send their results to results.
func (p *Pool[T]) startWorkers(ctx context.Context, work chan T, results chan<- Result[T], n int) *workerGroup[T] {
	g := &workerGroup[T]{p: p, ctx: ctx, work: work, results: results}
	g.add(n)
	return g
}
