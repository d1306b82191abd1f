package ledgertest

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/payout/payout/ledger"
	"github.com/payout/payout/ledger/consolestore"
)

// testConsoleSessions: the web console's sessions are shared through the ledger by two handles
// (two console hosts). A ceremony begun through one is taken once, through either, and not
// after it expires; a sign-in replaces the visitor's row, and its end through one handle is
// seen through the other; expired sessions are not found and are swept.
func testConsoleSessions(t *testing.T, e Engine) {
	ctx := context.Background()
	a := e.New(t)
	b := e.Again(t, a)
	now := time.Now().UTC()
	visitor := consolestore.Session{TokenSHA256: "aa", Expires: now.Add(5 * time.Minute), Ceremony: `{"for":"signin"}`, CeremonyExpires: now.Add(5 * time.Minute)}
	must(t, a.ConsoleSessions().BeginCeremony(ctx, visitor, now, 100))
	if s, ok, err := b.ConsoleSessions().Session(ctx, "aa", now); err != nil || !ok || s.Principal != "" {
		t.Fatalf("the visitor's row through the other handle: %+v, %v, %v", s, ok, err)
	}
	var wg sync.WaitGroup
	taken := make([]string, 8)
	for i := range taken {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := a
			if i%2 == 1 {
				h = b
			}
			c, err := h.ConsoleSessions().TakeCeremony(ctx, "aa", now)
			if err != nil {
				t.Error(err)
			}
			taken[i] = c
		}()
	}
	wg.Wait()
	n := 0
	for _, c := range taken {
		if c != "" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("a ceremony taken %d times at once, want once: %q", n, taken)
	}

	signed := consolestore.Session{TokenSHA256: "bb", Principal: "alice", Credential: []byte{1, 2, 0xff}, UserHandle: []byte("handle"), Expires: now.Add(8 * time.Hour)}
	must(t, b.ConsoleSessions().SignIn(ctx, "aa", signed))
	if _, ok, err := a.ConsoleSessions().Session(ctx, "aa", now); err != nil || ok {
		t.Errorf("the visitor's row after the sign-in: %v, %v; want gone", ok, err)
	}
	s, ok, err := a.ConsoleSessions().Session(ctx, "bb", now)
	if err != nil || !ok || s.Principal != "alice" || !bytes.Equal(s.Credential, signed.Credential) || !bytes.Equal(s.UserHandle, signed.UserHandle) {
		t.Fatalf("the signed-in session through the other handle: %+v, %v, %v", s, ok, err)
	}
	// A ceremony on a signed-in session keeps who signed in, and expires on its own.
	must(t, a.ConsoleSessions().BeginCeremony(ctx, consolestore.Session{TokenSHA256: "bb", Expires: now.Add(time.Minute), Ceremony: `{"for":"sign"}`,
		CeremonyExpires: now.Add(time.Minute)}, now, 100))
	if s, _, _ := b.ConsoleSessions().Session(ctx, "bb", now); s.Principal != "alice" || !s.Expires.Equal(signed.Expires) {
		t.Errorf("a ceremony changed the signed-in session: %+v", s)
	}
	if c, err := b.ConsoleSessions().TakeCeremony(ctx, "bb", now.Add(2*time.Minute)); err != nil || c != "" {
		t.Errorf("an expired ceremony taken: %q, %v", c, err)
	}
	if _, ok, _ := b.ConsoleSessions().Session(ctx, "bb", now.Add(9*time.Hour)); ok {
		t.Error("a session found after it expired")
	}
	must(t, b.ConsoleSessions().End(ctx, "bb"))
	if _, ok, err := a.ConsoleSessions().Session(ctx, "bb", now); err != nil || ok {
		t.Errorf("a session ended through one handle is found through the other: %v, %v", ok, err)
	}
	// Expired rows go when a ceremony begins.
	must(t, a.ConsoleSessions().BeginCeremony(ctx, consolestore.Session{TokenSHA256: "cc", Expires: now.Add(time.Minute), Ceremony: "x", CeremonyExpires: now.Add(time.Minute)}, now, 100))
	must(t, a.ConsoleSessions().BeginCeremony(ctx, consolestore.Session{TokenSHA256: "dd", Expires: now.Add(time.Hour), Ceremony: "x", CeremonyExpires: now.Add(time.Hour)}, now.Add(2*time.Minute), 100))
	var left int
	if err := e.SQL(t, a).QueryRowContext(ctx, `SELECT count(*) FROM console_sessions`).Scan(&left); err != nil || left != 1 {
		t.Errorf("%d sessions left (%v), want the one not expired", left, err)
	}
}

// testConsoleVisitorsBounded: visitors' ceremonies are bounded, one more than allowed is refused
// whichever handle asks, while a visitor already under way may begin again.
func testConsoleVisitorsBounded(t *testing.T, e Engine) {
	ctx := context.Background()
	a := e.New(t)
	b := e.Again(t, a)
	later := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	begin := func(l ledger.Ledger, token string, max int) error {
		return l.ConsoleSessions().BeginCeremony(ctx, consolestore.Session{TokenSHA256: token, Expires: later.Add(time.Minute), Ceremony: "x",
			CeremonyExpires: later.Add(time.Minute)}, later, max)
	}
	for _, token := range []string{"dd", "ee", "ff"} {
		must(t, begin(b, token, 3))
	}
	if err := begin(a, "gg", 3); !errors.Is(err, consolestore.ErrBusy) {
		t.Errorf("a fourth visitor's ceremony where three are allowed: %v, want ErrBusy", err)
	}
	must(t, begin(a, "ee", 3))
}
