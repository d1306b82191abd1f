package ledger_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/ledger"
)

// A ledger on another host is refused when its connection could fall back to plaintext without
// the URL saying so (sslmode absent, prefer or allow), before anything is sent; sslmode=disable
// written out is used, with a warning; this host (loopback, localhost, a socket) may be plaintext.
func TestPostgresPlaintextToAnotherHostIsRefusedUnlessWrittenOut(t *testing.T) {
	t.Setenv("PGSSLMODE", "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, u := range []string{
		"postgres://svc:s3cr3t-pw@192.0.2.1:5432/ledger",
		"postgres://svc@192.0.2.1:5432/ledger?sslmode=prefer",
		"postgres://svc@192.0.2.1:5432/ledger?sslmode=allow",
		"postgres://svc@127.0.0.1:1,192.0.2.1:5432/ledger?sslmode=prefer",
	} {
		_, err := ledger.Open(ctx, u, ledger.Options{Logger: slog.New(slog.DiscardHandler)})
		if !errors.Is(err, ledger.ErrPlaintext) || !strings.Contains(err.Error(), "sslmode=verify-full") || strings.Contains(err.Error(), "s3cr3t-pw") {
			t.Errorf("Open(%s): %v; want ErrPlaintext, saying sslmode=verify-full, without the password", ledger.Redact(u), err)
		}
		if _, err := ledger.Take(ctx, u); !errors.Is(err, ledger.ErrPlaintext) {
			t.Errorf("Take(%s): %v; want ErrPlaintext", ledger.Redact(u), err)
		}
	}
	for _, c := range []struct {
		url, env string
		warned   bool
	}{
		{"postgres://svc@192.0.2.1:1/ledger?sslmode=disable&connect_timeout=1", "", true},
		{"postgres://svc@192.0.2.1:1/ledger?connect_timeout=1", "disable", true},
		{"postgres://svc@192.0.2.1:1/ledger?sslmode=require&connect_timeout=1", "", false},
		{"postgres://svc@localhost:1/ledger?connect_timeout=1", "", false},
		{"postgres://svc@[::1]:1/ledger?sslmode=disable&connect_timeout=1", "", false},
		{"postgres:///ledger?host=/var/run/postgresql&port=1&connect_timeout=1", "", false},
	} {
		t.Setenv("PGSSLMODE", c.env)
		var log bytes.Buffer
		_, err := ledger.Open(ctx, c.url, ledger.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
		if err == nil || errors.Is(err, ledger.ErrPlaintext) || !strings.Contains(err.Error(), "cannot connect") {
			t.Errorf("Open(%s) with PGSSLMODE=%q: %v; want it tried (and no server there)", c.url, c.env, err)
		}
		if warned := strings.Contains(log.String(), "is not encrypted (sslmode=disable)"); warned != c.warned {
			t.Errorf("Open(%s) with PGSSLMODE=%q logged %q; want a warning of plaintext: %v", c.url, c.env, log.String(), c.warned)
		}
	}
}
