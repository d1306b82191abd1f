package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/payout/payout"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch/callbacks"
	"github.com/payout/payout/batch/reconcile"
	"github.com/payout/payout/ledger"
)

// demoSettle is how long the demo's payouts stay PENDING at the sandbox.
const demoSettle = 300 * time.Millisecond

// demoCmd pays the embedded sample file through a sandbox on loopback, end to end: the run, the
// service's signed callbacks, and a reconciliation. Nothing to set up, nothing leaves the machine.
func demoCmd(ctx context.Context, e *env, args []string) error {
	var o runOptions
	fs := newFlagSet(e, "demo", "demo [--report-dir DIR] [--keep DIR]")
	o.register(fs)
	fs.BoolVar(&o.jsonOut, "json", false, "print the run's summary as JSON on stdout")
	keep := fs.String("keep", "", "the demo's folder: its input, ledger and reports (default: a new temporary folder, kept)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	o.alwaysSummary = true
	work, err := demoFolder(*keep)
	if err != nil {
		return err
	}
	if !flagGiven(fs, "report-dir") {
		o.reportDir = filepath.Join(work, defaultReportDir)
	}
	// Absolute paths, so that what the demo prints can be opened from any folder.
	if o.reportDir, err = filepath.Abs(o.reportDir); err != nil {
		return err
	}
	input := filepath.Join(work, payout.SamplePayrollName)
	if err := os.WriteFile(input, payout.SamplePayrollCSV, 0o600); err != nil {
		return err
	}
	log, err := o.logger(e)
	if err != nil {
		return err
	}
	svc, err := startDemoService(log)
	if err != nil {
		return err
	}
	defer svc.close()
	fmt.Fprintf(e.stderr, "demo: sandbox on %s, paying %s\n", svc.base, input)

	s, err := svc.session(ctx, e, &o, filepath.Join(work, "demo-ledger.db"), log)
	if err != nil {
		return err
	}
	defer s.close()
	res, err := s.runner.Run(ctx, input)
	if err != nil {
		return s.runError(input, err)
	}
	if err := s.print(res); err != nil {
		return err
	}
	if res.ExitCode != exitOK {
		return &exitError{code: res.ExitCode}
	}
	if err := svc.reconcile(ctx, e, s, &o, res.RunID); err != nil {
		return err
	}
	if !o.jsonOut {
		fmt.Fprintf(e.stdout, "demo folder (input, ledger, reports): %s\n", work)
	}
	return nil
}

// demoFolder returns the absolute path of the folder the demo works in: keep, made if missing, or
// a new temporary folder. Either is kept: the reports name the input file, which must still be
// there when someone opens them, and the folder is the demo's own, never the caller's.
func demoFolder(keep string) (string, error) {
	if keep == "" {
		return os.MkdirTemp("", "payout-demo-")
	}
	if err := os.MkdirAll(keep, 0o750); err != nil {
		return "", err
	}
	return filepath.Abs(keep)
}

// demoService is the demo's loopback server: the sandbox, and the demo's callback receiver at
// callbacks.Path, bound once the ledger is open.
type demoService struct {
	sb       *sandbox.Server
	httpSrv  *http.Server
	receiver atomic.Pointer[callbacks.Handler]
	base     string
	token    string
	hashKey  string
}

func startDemoService(log *slog.Logger) (*demoService, error) {
	d := &demoService{token: randomSecret(), hashKey: randomSecret()}
	// The service settles the payouts once the run is over (reconcile's Settle), not while it
	// pays: a callback that comes before the run has recorded the answer naming its invoice is
	// stored, not applied, and the demo shows every callback applied with its name check.
	d.sb = sandbox.New(sandbox.Options{AuthToken: d.token, HashKey: []byte(d.hashKey), SettleAfter: demoSettle,
		SettleInterval: -1, SendCallbacks: true, DisplayNames: demoDisplayNames, Logger: log})
	mux := http.NewServeMux()
	mux.Handle("/", d.sb)
	mux.HandleFunc(callbacks.Path, func(w http.ResponseWriter, r *http.Request) {
		if h := d.receiver.Load(); h != nil {
			h.ServeHTTP(w, r)
			return
		}
		http.Error(w, "not ready", http.StatusServiceUnavailable)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		d.sb.Close()
		return nil, err
	}
	d.httpSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go d.httpSrv.Serve(ln)
	d.base = "http://" + ln.Addr().String()
	return d, nil
}

func (d *demoService) close() {
	d.httpSrv.Close()
	d.sb.Close()
}

// session opens the demo's session and binds the callback receiver to its ledger. Its
// environment holds only the secrets the demo just made and a ledger in the demo's folder (made by
// the first demo there): nothing of the caller's environment is used, so a demo can never reach
// a real service.
func (d *demoService) session(ctx context.Context, e *env, o *runOptions, demoLedger string, log *slog.Logger) (*session, error) {
	if err := ledger.Probe(demoLedger); errors.Is(err, ledger.ErrNoLedger) {
		db, err := ledger.Create(ctx, demoLedger, stamped(ledger.Options{Logger: log}))
		if err != nil {
			return nil, createError(err)
		}
		if err := db.Close(); err != nil {
			return nil, err
		}
	}
	demoEnv := map[string]string{
		envBaseURL: d.base, envAuthToken: d.token, envHashKey: d.hashKey,
		envVirtualPool: "DEMO-POOL-001", envCallbackURL: d.base + callbacks.Path, envRedirectURL: d.base + "/demo/return",
		envLedger: demoLedger, envRate: "50", envWorkers: "8",
		// Only the operator's time zone is taken from the caller: it is how the reports show times.
		envTZ: e.getenv(envTZ), "TZ": e.getenv("TZ"),
	}
	de := &env{stdin: e.stdin, stdout: e.stdout, stderr: e.stderr, getenv: func(k string) string { return demoEnv[k] }}
	s, err := newSession(ctx, de, o, modePay)
	if err != nil {
		return nil, err
	}
	handler, err := callbacks.NewHandler(callbacks.Config{Ledger: s.db, HashKey: []byte(d.hashKey), Logger: log})
	if err != nil {
		s.close()
		return nil, err
	}
	d.receiver.Store(handler)
	return s, nil
}

// reconcile lets the service settle the run's payouts and sign a callback for each success, then
// looks every payout up to tie the file out.
func (d *demoService) reconcile(ctx context.Context, e *env, s *session, o *runOptions, runID string) error {
	time.Sleep(demoSettle)
	d.sb.Settle()
	waitForCallbacks(ctx, d.sb, 10*time.Second)
	rec, err := reconcile.Run(ctx, s.runner.Config(), reconcile.Options{RunID: runID, ReportDir: o.reportDir})
	s.bar.end()
	if err != nil {
		return &exitError{code: exitAborted, err: fmt.Errorf("reconcile: %w", err)}
	}
	if !o.jsonOut {
		stats := d.sb.Stats()
		fmt.Fprintf(e.stdout, "callbacks: %d signed callbacks received and verified\n", stats.Callbacks)
		fmt.Fprintf(e.stdout, "reconcile %s: succeeded %d, failed %d, pending %d, mismatches %d, MYR %s\n",
			rec.RunID, rec.Succeeded, rec.Failed, rec.Pending, rec.Mismatches, rec.TotalAmount.StringFixed(2))
		for _, p := range rec.Reports {
			fmt.Fprintf(e.stdout, "  report: %s\n", p)
		}
		if err := printDemoNames(ctx, e.stdout, s.db); err != nil {
			return &exitError{code: exitAborted, err: err}
		}
	}
	if rec.ExitCode != exitOK {
		return &exitError{code: rec.ExitCode}
	}
	return nil
}

// waitForCallbacks waits until the sandbox has delivered every callback it owes, or the limit.
func waitForCallbacks(ctx context.Context, sb *sandbox.Server, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		stats := sb.Stats()
		succeeded := 0
		for _, rec := range sb.Payouts() {
			if rec.Status == "SUCCESS" {
				succeeded++
			}
		}
		if stats.Callbacks+stats.CallbackFailures >= succeeded {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func randomSecret() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
