package pgtest_test

import (
	"database/sql"
	"testing"

	"github.com/payout/payout/internal/pgtest"
)

func TestEachTestHasItsOwnDatabase(t *testing.T) {
	a, b := pgtest.New(t), pgtest.New(t)
	if a == b {
		t.Fatalf("two tests share %s", a)
	}
	db, err := sql.Open("pgx", a)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE t (n int)`); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("pgx", b)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var n int
	if err := other.QueryRow(`SELECT count(*) FROM information_schema.tables WHERE table_name = 't'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("a table made in one test's database is in the other's")
	}
}

// The benchmarks' cluster syncs its commits as a production server does; the tests' does not.
func TestDurableSyncsAndNewDoesNot(t *testing.T) {
	for _, c := range []struct {
		url  string
		want string
	}{{pgtest.Durable(t), "on"}, {pgtest.New(t), "off"}} {
		db, err := sql.Open("pgx", c.url)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, setting := range []string{"fsync", "synchronous_commit", "full_page_writes"} {
			var got string
			if err := db.QueryRow("SHOW " + setting).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("%s: %s = %s, want %s", c.url, setting, got, c.want)
			}
		}
	}
}
