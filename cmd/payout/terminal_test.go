package main_test

import (
	"bytes"
	"errors"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/payout/payout/api/sandbox"
)

// terminalCols is a narrow terminal: a laptop's split pane.
const terminalCols = 50

// barText is what the progress bar's line holds.
var barText = regexp.MustCompile(`\d+/\d+ rows`)

// TestProgressBarFitsANarrowTerminal: in a 50-column terminal the bar is redrawn on one line, and
// no line is wider than the terminal (a line that wraps cannot be redrawn in place, and each
// redraw would add lines to the screen).
func TestProgressBarFitsANarrowTerminal(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	term := u.startInTerminal(t, "run", "--rate", "20", samplePath(t))
	if err := term.wait(); err != nil {
		t.Fatalf("run in a terminal: %v\n%s", err, term.output())
	}
	checkBarDrawings(t, term.output())
	lines := screen(term.output(), terminalCols)
	if n := term.redraws(); n < 3 {
		t.Errorf("the bar was drawn %d times; want a run long enough to redraw it", n)
	}
	if got := countMatching(lines, barText); got != 1 {
		t.Errorf("the bar fills %d lines of the screen, want 1:\n%s", got, strings.Join(lines, "\n"))
	}
}

// TestProgressBarKeepsWarningsOnLinesOfTheirOwn: a warning logged while the bar is drawn (here,
// that one worker cannot keep --rate against a service answering in 100 ms) is written on a line
// of its own above the bar, which is drawn again below it, never run into the bar's line.
func TestProgressBarKeepsWarningsOnLinesOfTheirOwn(t *testing.T) {
	t.Parallel()
	sb := sandbox.New(sandbox.Options{AuthToken: "e2e-token", HashKey: []byte("e2e-hash-key"),
		Faults: sandbox.Faults{Latency: 100 * time.Millisecond}})
	t.Cleanup(sb.Close)
	u := newUser(t, sb)
	term := u.startInTerminal(t, "run", "--rate", "20", "--workers", "1", samplePath(t))
	if err := term.wait(); err != nil {
		t.Fatalf("run in a terminal: %v\n%s", err, term.output())
	}
	checkBarDrawings(t, term.output())
	lines := screen(term.output(), terminalCols)
	shown := strings.Join(lines, "\n")
	if !strings.Contains(string(term.output()), "workers can send at most") {
		t.Fatalf("no warning about the workers was logged:\n%s", shown)
	}
	for _, line := range lines {
		if barText.MatchString(line) && strings.Contains(line, "level=") {
			t.Errorf("a log record is written on the bar's line: %q\n%s", line, shown)
		}
	}
	if got := countMatching(lines, barText); got != 1 {
		t.Errorf("the bar fills %d lines of the screen, want 1:\n%s", got, shown)
	}
}

// TestProgressBarNotDrawnAmongLogLines: with -v the log lines go to the terminal, and the bar
// is not drawn between them.
func TestProgressBarNotDrawnAmongLogLines(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	term := u.startInTerminal(t, "run", "-v", samplePath(t))
	if err := term.wait(); err != nil {
		t.Fatalf("run -v in a terminal: %v\n%s", err, term.output())
	}
	out := string(term.output())
	if !strings.Contains(out, "run finished") || term.redraws() > 0 {
		t.Errorf("run -v in a terminal drew the bar %d times among its logs:\n%s", term.redraws(), out)
	}
}

// TestProgressBarLineClearedOnInterrupt: Ctrl-C while the bar is drawn leaves the bar's line
// clean: the message that the run is finishing, and what follows, are on lines of their own.
func TestProgressBarLineClearedOnInterrupt(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	term := u.startInTerminal(t, "run", "--rate", "10", samplePath(t))
	<-term.barDrawn
	if err := term.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := term.wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("interrupted run: %v, want exit 1\n%s", err, term.output())
	}
	checkBarDrawings(t, term.output())
	lines := screen(term.output(), terminalCols)
	shown := strings.Join(lines, "\n")
	if !strings.Contains(shown, "payout: interrupt: finishing") {
		t.Errorf("the screen does not say the run is finishing:\n%s", shown)
	}
	for _, line := range lines {
		if barText.MatchString(line) && !strings.HasPrefix(strings.TrimSpace(line), "[") && !strings.HasPrefix(line, "run ") {
			t.Errorf("the bar's line holds something else: %q\n%s", line, shown)
		}
		if barText.MatchString(line) && strings.Contains(line, "payout:") {
			t.Errorf("a message is written on the bar's line: %q", line)
		}
	}
}

// terminal is the binary running in a pseudo-terminal of terminalCols columns.
type terminal struct {
	cmd      *exec.Cmd
	mu       sync.Mutex
	out      bytes.Buffer
	read     chan struct{} // closed when the terminal has nothing more to read
	barDrawn chan struct{} // closed once the bar has been drawn
}

func (u *user) startInTerminal(t *testing.T, args ...string) *terminal {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir, cmd.Env = u.dir, append(u.env, "TERM=xterm")
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: terminalCols, Rows: 20})
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	term := &terminal{cmd: cmd, read: make(chan struct{}), barDrawn: make(chan struct{})}
	go func() {
		defer close(term.read)
		var once sync.Once
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			drawn := barText.Match(term.out.Bytes())
			term.mu.Unlock()
			if drawn {
				once.Do(func() { close(term.barDrawn) })
			}
			if err != nil {
				once.Do(func() { close(term.barDrawn) })
				return
			}
		}
	}()
	return term
}

// wait waits for the command to end and for its output to be read.
func (term *terminal) wait() error {
	err := term.cmd.Wait()
	<-term.read
	return err
}

func (term *terminal) output() []byte {
	term.mu.Lock()
	defer term.mu.Unlock()
	return bytes.Clone(term.out.Bytes())
}

// redraws counts the bar's drawings.
func (term *terminal) redraws() int {
	return len(barText.FindAll(term.output(), -1))
}

// escapes are the terminal's control sequences, such as "erase to end of line".
var escapes = regexp.MustCompile(`\x1b\[[0-9;?]*[@-~]`)

// checkBarDrawings fails for any drawing of the bar (the text between two carriage returns or
// newlines) that reaches the terminal's last column, where the terminal wraps it.
func checkBarDrawings(t *testing.T, out []byte) {
	t.Helper()
	for _, drawing := range regexp.MustCompile(`[\r\n]+`).Split(escapes.ReplaceAllString(string(out), ""), -1) {
		if barText.MatchString(drawing) && len([]rune(drawing)) >= terminalCols {
			t.Errorf("the bar is drawn %d columns wide in a terminal of %d: %q", len([]rune(drawing)), terminalCols, drawing)
		}
	}
}

// screen plays out to a screen cols wide: printed characters, carriage returns, newlines and
// "erase to end of line" (ESC [ K); other escape sequences are skipped. It returns the lines the
// screen shows, a line wider than the screen wrapped onto the next.
func screen(out []byte, cols int) []string {
	rows := [][]rune{nil}
	row, col := 0, 0
	text := []rune(string(out))
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '\r':
			col = 0
		case c == '\n':
			row, col = row+1, 0
		case c == 0x1b && i+1 < len(text) && text[i+1] == '[':
			j := i + 2
			for j < len(text) && (text[j] < 0x40 || text[j] > 0x7e) {
				j++
			}
			if j < len(text) && text[j] == 'K' && col < len(rows[row]) {
				rows[row] = rows[row][:col]
			}
			i = j
		case c < ' ':
		default:
			if col == cols {
				row, col = row+1, 0
			}
			for len(rows) <= row {
				rows = append(rows, nil)
			}
			for len(rows[row]) <= col {
				rows[row] = append(rows[row], ' ')
			}
			rows[row][col] = c
			col++
		}
		for len(rows) <= row {
			rows = append(rows, nil)
		}
	}
	lines := make([]string, 0, len(rows))
	for _, r := range rows {
		lines = append(lines, strings.TrimRight(string(r), " "))
	}
	return lines
}

func countMatching(lines []string, re *regexp.Regexp) int {
	n := 0
	for _, l := range lines {
		if re.MatchString(l) {
			n++
		}
	}
	return n
}
