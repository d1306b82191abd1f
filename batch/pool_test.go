package batch

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// poolFor is a pool of one worker, no rate limit, whose tasks are handled by handle.
func poolFor(handle func(task) taskResult) *pool {
	cfg := Config{Limiter: rate.NewLimiter(rate.Inf, 1), Workers: 1, BreakerThreshold: 3, Now: time.Now}
	return &pool{cfg: cfg, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		handle: func(_ context.Context, t task) taskResult { return handle(t) }}
}

func TestPoolLooksUpUnknownOutcomesBeforeAnySend(t *testing.T) {
	var order []string
	var mu sync.Mutex
	p := poolFor(func(t task) taskResult {
		mu.Lock()
		order = append(order, t.ref)
		mu.Unlock()
		return taskResult{task: t, serviceOK: true, rowDone: true}
	})
	now := time.Now()
	tasks := []task{{ref: "send-1", kind: taskSend, at: now.Add(-time.Hour)}, {ref: "send-2", kind: taskSend, at: now.Add(-time.Hour)},
		{ref: "lookup", kind: taskLookup, at: now, initial: true}}
	if err := p.run(context.Background(), tasks, 0, 3, nil); err != nil {
		t.Fatal(err)
	}
	if len(order) != 3 || order[0] != "lookup" {
		t.Errorf("order %v, want the initial lookup first", order)
	}
}

func TestPoolBreakers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		o        taskResult
		breaker  int
		want     error
		handled  int
		wantText string
	}{
		{"failures in a row", taskResult{failure: true}, 0, ErrAborted, 3, "failed 3 times in a row"},
		{"429s in a row", taskResult{throttled: true}, 5, ErrThrottled, 5, "5 answers in a row were 429"},
		{"a fatal answer", taskResult{fatal: ErrUnauthorized}, 0, ErrUnauthorized, 1, "auth token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			handled := 0
			p := poolFor(func(t task) taskResult {
				handled++
				o := tc.o
				o.task, o.next = t, &task{ref: t.ref, kind: t.kind, at: time.Now()}
				return o
			})
			p.throttleBreaker = tc.breaker
			err := p.run(context.Background(), []task{{ref: "R1", kind: taskLookup, at: time.Now()}}, 0, 1, nil)
			if !errors.Is(err, ErrAborted) || !errors.Is(err, tc.want) || handled != tc.handled {
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
	p := poolFor(func(t task) taskResult {
		handled++
		cancel(stop)
		return taskResult{task: t, serviceOK: true, rowDone: true}
	})
	now := time.Now()
	tasks := []task{{ref: "A", kind: taskSend, at: now}, {ref: "B", kind: taskSend, at: now}, {ref: "C", kind: taskSend, at: now}}
	err := p.run(ctx, tasks, 0, 3, nil)
	if !errors.Is(err, ErrAborted) || !errors.Is(err, stop) || handled != 1 {
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
		p := poolFor(func(t task) taskResult { return taskResult{task: t, serviceOK: true, rowDone: true} })
		// The first row done stops the run, with the worker idle again and the next chunk waiting.
		p.cfg.Progress = func(done, _ int) {
			if done == 1 {
				cancel(stop)
			}
		}
		feed := make(chan feedBatch, 1)
		feed <- feedBatch{tasks: []task{{ref: "B", kind: taskSend, at: time.Now()}}}
		close(feed)
		err := p.run(ctx, []task{{ref: "A", kind: taskSend, at: time.Now()}}, 0, 2, feed)
		if !errors.Is(err, ErrAborted) || !errors.Is(err, stop) {
			t.Fatalf("err %v, want the run aborted by its stop", err)
		}
	}
}
