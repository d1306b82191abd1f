package ledger

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestConnectAdviceNamesWhatToCheck: the server's refusals each say what to check; a password
// refused or missing points at ~/.pgpass and PGPASSFILE, never at whether the server runs.
func TestConnectAdviceNamesWhatToCheck(t *testing.T) {
	t.Parallel()
	withPassword := &pgx.ConnConfig{Config: pgconn.Config{User: "payout", Database: "ledger", Password: "x"}}
	without := &pgx.ConnConfig{Config: pgconn.Config{User: "payout", Database: "ledger"}}
	refused := func(code, msg string) error {
		return fmt.Errorf("failed to connect: %w", &pgconn.PgError{Code: code, Message: msg})
	}
	for _, c := range []struct {
		name    string
		cfg     *pgx.ConnConfig
		err     error
		want    []string
		refused bool
	}{
		{"wrong password", withPassword, refused("28P01", "password authentication failed"), []string{"refused the password of user payout", "~/.pgpass", "$PGPASSFILE"}, true},
		{"no password", without, refused("28P01", "password authentication failed"), []string{"none was found", "~/.pgpass", "$PGPASSFILE"}, true},
		{"unknown role", without, refused("28000", `role "payout" does not exist`), []string{"refused user payout", "pg_hba.conf"}, true},
		{"missing database", without, refused("3D000", `database "ledger" does not exist`), []string{"no database ledger", "createdb"}, true},
		{"nothing listening", without, errors.New("dial tcp 127.0.0.1:5432: connect: connection refused"), []string{"is the server running"}, false},
	} {
		advice := connectAdvice(c.cfg, c.err)
		for _, w := range c.want {
			if !strings.Contains(advice, w) {
				t.Errorf("%s: %q lacks %q", c.name, advice, w)
			}
		}
		if c.refused && strings.Contains(advice, "is the server running") {
			t.Errorf("%s: %q asks whether the server runs", c.name, advice)
		}
		if refusedAccess(c.err) != c.refused {
			t.Errorf("%s: refusedAccess = %v, want %v", c.name, !c.refused, c.refused)
		}
	}
}
