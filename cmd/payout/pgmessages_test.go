package main_test

import (
	"database/sql"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/payout/payout/internal/pgtest"
)

// TestPostgresLedgerProblemsSayWhatToCheck: each way a PostgreSQL ledger can be out of reach or
// not a ledger is said as what it is, with the exit code `payout status` gives it, and never
// blamed on the payout service's address.
func TestPostgresLedgerProblemsSayWhatToCheck(t *testing.T) {
	t.Parallel()
	empty := pgtest.New(t)
	foreign := pgtest.New(t)
	db, err := sql.Open("pgx", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE invoices (id int)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	u := newUserWithoutLedger(t, newSandbox(t))
	sample := samplePath(t)
	closed := closedPort(t)
	silent := silentServer(t)
	withUser := func(raw, user string) string {
		p, _ := url.Parse(raw)
		p.User = url.User(user)
		return p.String()
	}
	withDatabase := func(raw, name string) string {
		p, _ := url.Parse(raw)
		p.Path = "/" + name
		return p.String()
	}
	for _, c := range []struct {
		name, ledger string
		args         []string
		code         int
		want         []string
	}{
		{"run on an empty database", empty, []string{"run", sample}, 2, []string{"no ledger", "payout init"}},
		{"watch on an empty database", empty, []string{"watch", "--once", u.dir}, 2, []string{"no ledger", "payout init"}},
		{"run on another application's database", foreign, []string{"run", sample}, 2, []string{"not a payout ledger"}},
		{"run with nothing listening", "postgres://payout@" + closed + "/payout?sslmode=disable", []string{"run", sample}, 1, []string{"is the server running"}},
		{"status on a server that never answers", "postgres://payout@" + silent + "/payout?sslmode=disable", []string{"status"}, 1, []string{"did not answer in time"}},
		{"an unknown role", withUser(empty, "nobody_here"), []string{"status"}, 2, []string{"refused user nobody_here", "pg_hba.conf"}},
		{"a missing database", withDatabase(empty, "no_such_db"), []string{"status"}, 2, []string{"no database no_such_db", "createdb"}},
		{"run as an unknown role", withUser(empty, "nobody_here"), []string{"run", sample}, 2, []string{"refused user nobody_here"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := append(append([]string(nil), u.env...), "PAYOUT_LEDGER="+c.ledger, "PAYOUT_LEDGER_WAIT=0")
			uu := &user{tb: t, dir: u.dir, env: env}
			began := time.Now()
			out, errOut, code := uu.run(c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d: %s %s", code, c.code, out, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			for _, never := range []string{"PAYOUT_BASE_URL", "close ledger"} {
				if strings.Contains(errOut, never) {
					t.Errorf("stderr says %q:\n%s", never, errOut)
				}
			}
			if took := time.Since(began); took > time.Minute {
				t.Errorf("took %s: a ledger out of reach must fail within its connect timeout", took.Round(time.Second))
			}
		})
	}
}

// closedPort is a loopback address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// silentServer is a loopback address that accepts connections and never says a word.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}
