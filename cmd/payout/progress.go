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
	if done < total && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
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
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d rows  %.1f/s  ETA %s ", strings.Repeat("=", filled), strings.Repeat(" ", width-filled),
		done, total, perSec, eta)
	if done >= total {
		fmt.Fprintln(p.w)
	}
}
