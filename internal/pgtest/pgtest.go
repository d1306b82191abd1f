// Package pgtest starts a throwaway PostgreSQL cluster from Debian's packages for tests, one per
// test binary, and gives each test a database of its own in it.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver of database/sql
)

// installHint is what a test that skips, or fails under CI, tells the reader to do.
const installHint = "PostgreSQL is not installed: install it with `apt-get install -y postgresql` (.ci/run does so under CI=true)"

// New is the URL of an empty database for tb alone, in this test binary's cluster (started by
// the first call), dropped when tb ends. Without PostgreSQL it skips tb, saying how to install
// it, except under CI=true, where it fails tb.
func New(tb testing.TB) string {
	tb.Helper()
	skipShort(tb)
	return newIn(tb, start(tb, &fast))
}

// Durable is New in a second cluster of this test binary, started by its first call, that
// keeps PostgreSQL's durable defaults (fsync, synchronous_commit and full_page_writes on): for
// the benchmarks that set PostgreSQL beside a SQLite ledger, which syncs every commit
// (synchronous=FULL). The tests' cluster turns them off, and comparing a durable ledger with one
// that is not would flatter PostgreSQL.
func Durable(tb testing.TB) string {
	tb.Helper()
	skipShort(tb)
	return newIn(tb, start(tb, &durable))
}

// skipShort skips tb in the quick loop (go test -short), which leaves PostgreSQL out.
func skipShort(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("-short leaves out the PostgreSQL tests; run without -short for them")
	}
}

func newIn(tb testing.TB, c *cluster) string {
	tb.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), databases.Add(1))
	admin := c.url("postgres")
	if err := exec1(admin, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("create test database: %v", err)
	}
	tb.Cleanup(func() {
		if err := exec1(admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("drop test database %s: %v", name, err)
		}
	})
	return c.url(name)
}

// Admin is the URL of the cluster's maintenance database, as its superuser: for tests that
// look at every session (pg_stat_activity) or end one (pg_terminate_backend).
func Admin(tb testing.TB) string {
	tb.Helper()
	return start(tb, &fast).url("postgres")
}

// A kind of cluster, started once per test binary by the first test that asks for it.
type kind struct {
	durable  bool
	once     sync.Once
	shared   *cluster
	startErr error
}

// DataDir is the data folder (PGDATA) of this test binary's cluster of New's databases: for tests that look in the
// files the server writes, as a test of a SQLite ledger reads its file.
func DataDir(tb testing.TB) string {
	tb.Helper()
	return filepath.Join(start(tb, &fast).dir, "data")
}

var (
	fast      = kind{}
	durable   = kind{durable: true}
	databases atomic.Int64
)

type cluster struct {
	port int
	dir  string
}

func (c *cluster) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

func start(tb testing.TB, k *kind) *cluster {
	tb.Helper()
	bin := binDir()
	if bin == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatal(installHint)
		}
		tb.Skip(installHint)
	}
	k.once.Do(func() { k.shared, k.startErr = startCluster(bin, k.durable) })
	if k.startErr != nil {
		tb.Fatalf("start PostgreSQL from %s: %v", bin, k.startErr)
	}
	return k.shared
}

// binDir is the newest of Debian's /usr/lib/postgresql/*/bin that has initdb and postgres.
func binDir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isFile(filepath.Join(d, "initdb")) && isFile(filepath.Join(d, "postgres")) {
			return d
		}
	}
	return ""
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// startCluster makes a cluster in a new temporary folder and starts it on a free loopback port.
// initdb and postgres refuse to run as root: as root they run as the postgres account. The server
// dies with this test binary (its parent-death signal), so a killed test leaves no server. Unless
// durable, it trades crash safety for speed: nothing in a test's database outlives the test.
func startCluster(bin string, durable bool) (*cluster, error) {
	removeStale()
	dir, err := os.MkdirTemp("", fmt.Sprintf("payout-pg-%d-", os.Getpid()))
	if err != nil {
		return nil, err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root, and there is no postgres account to run PostgreSQL as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	c := &cluster{port: port, dir: dir}
	logFile, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		return nil, err
	}
	started := make(chan error, 1)
	go func() {
		// The parent-death signal is sent when the thread that started the child ends: this
		// goroutine keeps its thread until the server exits.
		runtime.LockOSThread()
		args := []string{"-D", data, "-p", strconv.Itoa(port),
			"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=" + dir, "-c", "max_connections=200"}
		if !durable {
			args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
		}
		srv := exec.Command(filepath.Join(bin, "postgres"), args...)
		srv.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
		srv.Stdout, srv.Stderr = logFile, logFile
		if err := srv.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = srv.Wait()
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := exec1(c.url("postgres"), "SELECT 1")
		if err == nil {
			return c, nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
			return nil, fmt.Errorf("not answering after 30 s: %v\n%s", err, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// removeStale removes the folders of clusters whose test binary has gone.
func removeStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "payout-pg-*-*"))
	for _, d := range dirs {
		parts := strings.Split(filepath.Base(d), "-")
		pid, err := strconv.Atoi(parts[2])
		if err != nil || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(d)
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// exec1 runs one statement on its own connection.
func exec1(url, stmt string) error {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = db.ExecContext(ctx, stmt)
	return err
}
