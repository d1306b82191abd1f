package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"

	"github.com/payout/payout/batch/words"
)

// progressBar draws rows done of total, the rate and an ETA on one terminal line, sized to the
// terminal so that a redraw never wraps: a wrapped line cannot be drawn over with \r, and each
// redraw would then add lines to the screen.
type progressBar struct {
	w       io.Writer
	zone    *time.Location // the operator's: the times the bar shows
	width   func() int     // the terminal's columns now
	mu      sync.Mutex
	start   time.Time
	last    time.Time
	startAt int
	// note says what the run waits for, when it only waits; done and total are the last drawn.
	note        string
	done, total int
	open        bool // a line is drawn and not yet ended
}

// defaultWidth is assumed when the terminal does not say its size.
const defaultWidth = 80

func newProgressBar(w io.Writer, zone *time.Location) *progressBar {
	return &progressBar{w: w, zone: zone, width: terminalWidth(w), start: time.Now(), startAt: -1}
}

// terminalWidth asks the terminal behind w for its width at each call, so that a resized window
// is followed.
func terminalWidth(w io.Writer) func() int {
	return func() int {
		if f, ok := w.(*os.File); ok {
			if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
				return cols
			}
		}
		return defaultWidth
	}
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
		p.note = fmt.Sprintf("waiting until %s for %d unknown outcomes (grace)", words.FormatClock(until, p.zone), n)
	}
	if p.startAt >= 0 {
		p.draw(time.Now())
	}
}

// writeAbove writes a log record on a line of its own above the bar, and draws the bar again
// below it: a record written into the bar's line would be drawn over, or run into it.
func (p *progressBar) writeAbove(record []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.open {
		return p.w.Write(record)
	}
	fmt.Fprint(p.w, "\r\x1b[K")
	n, err := p.w.Write(record)
	p.draw(time.Now())
	return n, err
}

// logOutput is where a session's log records go: stderr, or above the progress bar once one is
// drawn there (the logger is made before the bar).
type logOutput struct {
	w   io.Writer
	bar atomic.Pointer[progressBar]
}

func (o *logOutput) Write(record []byte) (int, error) {
	if bar := o.bar.Load(); bar != nil {
		return bar.writeAbove(record)
	}
	return o.w.Write(record)
}

// end ends the line the bar is on, if any, so that what is written next (a summary, an error)
// starts on a line of its own; the next file's bar starts afresh.
func (p *progressBar) end() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open {
		fmt.Fprintln(p.w)
	}
	p.open, p.startAt, p.start, p.note = false, -1, time.Now(), ""
}

// draw writes the line for p.done of p.total; the caller holds p.mu.
func (p *progressBar) draw(now time.Time) {
	done, total := p.done, p.total
	p.last = now
	elapsed := now.Sub(p.start).Seconds()
	perSec := 0.0
	if elapsed > 0 {
		perSec = float64(done-p.startAt) / elapsed
	}
	eta := "--"
	if perSec > 0 && done < total {
		eta = time.Duration(float64(total-done) / perSec * float64(time.Second)).Round(time.Second).String()
	}
	text := fmt.Sprintf("%d/%d rows  %.1f/s  ETA %s", done, total, perSec, eta)
	if p.note != "" {
		text = fmt.Sprintf("%d/%d rows  %s", done, total, p.note)
	}
	// \x1b[K clears what a longer line drawn before left on the right.
	fmt.Fprintf(p.w, "\r%s\x1b[K", barLine(text, done, total, p.width()))
	p.open = true
	if done >= total {
		fmt.Fprintln(p.w)
		p.open = false
	}
}

// Bar widths: the widest drawn, and the narrowest worth drawing rather than leaving out.
const (
	maxBarWidth = 30
	minBarWidth = 10
)

// barLine is "[=====     ] text" in fewer than cols columns (the last column is left empty:
// a terminal that wraps at its edge would otherwise move to the next line). A narrow terminal
// gets a shorter bar, then the text alone, then the text cut.
func barLine(text string, done, total, cols int) string {
	room := cols - 1
	barWidth := min(maxBarWidth, room-len(text)-3) // "[", "] "
	if barWidth < minBarWidth {
		if len(text) > room {
			text = text[:max(room, 0)]
		}
		return text
	}
	filled := 0
	if total > 0 {
		filled = min(barWidth*done/total, barWidth)
	}
	return "[" + strings.Repeat("=", filled) + strings.Repeat(" ", barWidth-filled) + "] " + text
}
