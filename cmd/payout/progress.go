package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progressBar draws rows done of total, the rate and an ETA on one terminal line.
type progressBar struct {
	w       io.Writer
	mu      sync.Mutex
	start   time.Time
	last    time.Time
	startAt int
	// note says what the run waits for, when it only waits; done and total are the last drawn.
	note        string
	done, total int
}

func newProgressBar(w io.Writer) *progressBar {
	return &progressBar{w: w, start: time.Now(), startAt: -1}
}

func (p *progressBar) update(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.startAt < 0 {
		p.startAt = done
	}
	p.done, p.total = done, total
	if done < total && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.draw(now)
}

// waiting shows, until the run works again (n == 0), that n payouts whose outcome is unknown are
// waited for, and until when.
func (p *progressBar) waiting(n int, until time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.note = ""
	if n > 0 {
		p.note = fmt.Sprintf(" waiting until %s for %d unknown outcomes (grace) ", until.Format(time.TimeOnly), n)
	}
	if p.startAt >= 0 {
		p.draw(time.Now())
	}
}

// draw writes the line for p.done of p.total; the caller holds p.mu.
func (p *progressBar) draw(now time.Time) {
	done, total := p.done, p.total
	p.last = now
	const width = 30
	filled := 0
	if total > 0 {
		filled = width * done / total
	}
	elapsed := now.Sub(p.start).Seconds()
	perSec := 0.0
	if elapsed > 0 {
		perSec = float64(done-p.startAt) / elapsed
	}
	eta := "--"
	if perSec > 0 && done < total {
		eta = time.Duration(float64(total-done) / perSec * float64(time.Second)).Round(time.Second).String()
	}
	if p.note != "" {
		eta = "--" + p.note
	}
	// \x1b[K clears what a longer line drawn before left on the right.
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d rows  %.1f/s  ETA %s \x1b[K", strings.Repeat("=", filled), strings.Repeat(" ", width-filled),
		done, total, perSec, eta)
	if done >= total {
		fmt.Fprintln(p.w)
	}
}
