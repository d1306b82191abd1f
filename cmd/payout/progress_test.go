package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestProgressBarSaysWhatItWaitsFor: at 2881/3000 with an ETA of a second, a run that waits out
// the unknown-outcome grace says so on the bar, and stops saying it once it works again.
func TestProgressBarSaysWhatItWaitsFor(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	myt, err := time.LoadLocation("Asia/Kuala_Lumpur")
	if err != nil {
		t.Fatal(err)
	}
	bar := newProgressBar(&out, myt)
	bar.update(2881, 3000)
	until := time.Date(2026, 11, 23, 18, 5, 0, 0, time.UTC) // 02:05 the next day in Kuala Lumpur
	bar.waiting(119, until)
	lines := strings.Split(out.String(), "\r")
	if last := lines[len(lines)-1]; !strings.Contains(last, "2881/3000 rows") || !strings.Contains(last, "waiting until 02:05:00 +08:00 for 119 unknown outcomes") {
		t.Errorf("bar %q, want the rows and what it waits for", last)
	}
	bar.waiting(0, time.Time{})
	lines = strings.Split(out.String(), "\r")
	if last := lines[len(lines)-1]; strings.Contains(last, "waiting") || !strings.Contains(last, "2881/3000 rows") {
		t.Errorf("bar %q after the wait, want the rows without the note", last)
	}
}

// TestProgressBarLineFitsEveryWidth: the line is always narrower than the terminal, the bar
// shrinking, then left out, then the text cut; a wide terminal gets the whole bar.
func TestProgressBarLineFitsEveryWidth(t *testing.T) {
	t.Parallel()
	text := "2881/3000 rows  12.5/s  ETA 10s"
	for cols := 1; cols <= 200; cols++ {
		line := barLine(text, 2881, 3000, cols)
		if len(line) >= cols && cols > 1 {
			t.Errorf("%d columns: %q is %d wide", cols, line, len(line))
		}
		if cols >= len(text)+1 && !strings.Contains(line, text) {
			t.Errorf("%d columns: %q cuts the text though it fits", cols, line)
		}
	}
	if line := barLine(text, 3000, 3000, 200); !strings.HasPrefix(line, "["+strings.Repeat("=", maxBarWidth)+"]") {
		t.Errorf("wide terminal, all done: %q, want the whole bar filled", line)
	}
}
