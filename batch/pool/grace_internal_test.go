package pool

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// The grace announcement never shows a negative wait: a grace already over is not announced,
// and a wait under a second shows as one second.
func TestAnnounceGraceShowsNoNegativeWait(t *testing.T) {
	now := time.Date(2026, 11, 26, 21, 22, 17, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		graceEnd time.Time
		want     string // "" for no announcement
	}{
		{"over four seconds ago", now.Add(-4 * time.Second), ""},
		{"over now", now, ""},
		{"in 300ms", now.Add(300 * time.Millisecond), "(1s from now)"},
		{"in 3.2s", now.Add(3200 * time.Millisecond), "(4s from now)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := New(Config{Logger: slog.New(slog.NewTextHandler(&buf, nil))}, func(context.Context, graceTask) Result[graceTask] { return Result[graceTask]{} })
			said := p.announceGrace(queue[graceTask]{{end: tc.graceEnd}}, now, time.Time{})
			got := buf.String()
			switch {
			case tc.want == "" && (got != "" || !said.IsZero()):
				t.Errorf("announced %q", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("announced %q, want %q", got, tc.want)
			case strings.Contains(got, "(-"):
				t.Errorf("a negative wait: %q", got)
			}
		})
	}
}

// graceTask is a lookup waiting out a grace that ends at end.
type graceTask struct{ end time.Time }

func (t graceTask) Due() time.Time      { return t.end }
func (graceTask) First() bool           { return false }
func (graceTask) Waits() bool           { return false }
func (t graceTask) GraceEnd() time.Time { return t.end }
