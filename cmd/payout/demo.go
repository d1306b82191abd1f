package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
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
	keep := fs.String("keep", "", "keep the demo's ledger and input in this folder (default: a temporary folder, removed)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	o.alwaysSummary = true
	work := *keep
	if work == "" {
		dir, err := os.MkdirTemp("", "payout-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		work = dir
	} else if err := os.MkdirAll(work, 0o750); err != nil {
		return err
	}
	input := filepath.Join(work, payout.SamplePayrollName)
	if err := os.WriteFile(input, payout.SamplePayrollCSV, 0o600); err != nil {
		return err
	}
	log, err := o.logger(e.stderr)
	if err != nil {
		return err
	}
	token, hashKey := randomSecret(), randomSecret()
	sb := sandbox.New(sandbox.Options{AuthToken: token, HashKey: []byte(hashKey), SettleAfter: demoSettle,
		SendCallbacks: true, Logger: log})
	defer sb.Close()
	// One loopback server: the sandbox, and this demo's callback receiver at /callback, bound once
	// the ledger is open.
	var receiver atomic.Pointer[callbacks.Handler]
	mux := http.NewServeMux()
	mux.Handle("/", sb)
	mux.HandleFunc(callbacks.Path, func(w http.ResponseWriter, r *http.Request) {
		if h := receiver.Load(); h != nil {
			h.ServeHTTP(w, r)
			return
		}
		http.Error(w, "not ready", http.StatusServiceUnavailable)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	httpSrv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go httpSrv.Serve(ln)
	defer httpSrv.Close()
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(e.stderr, "demo: sandbox on %s, paying %s\n", base, payout.SamplePayrollName)

	// The demo's own environment: secrets it just made, a ledger in its folder (made by the first
	// demo there). Nothing of the caller's environment is used, so a demo can never reach a real service.
	demoLedger := filepath.Join(work, "demo-ledger.db")
	if err := ledger.Probe(demoLedger); errors.Is(err, ledger.ErrNoLedger) {
		db, err := ledger.Create(ctx, demoLedger, ledger.Options{Logger: log})
		if err != nil {
			return createError(err)
		}
		if err := db.Close(); err != nil {
			return err
		}
	}
	demoEnv := map[string]string{
		envBaseURL: base, envAuthToken: token, envHashKey: hashKey,
		envVirtualPool: "DEMO-POOL-001", envCallbackURL: base + callbacks.Path, envRedirectURL: base + "/demo/return",
		envLedger: demoLedger, envRate: "50", envWorkers: "8",
	}
	de := &env{stdin: e.stdin, stdout: e.stdout, stderr: e.stderr, getenv: func(k string) string { return demoEnv[k] }}
	s, err := newSession(ctx, de, &o, modePay)
	if err != nil {
		return err
	}
	defer s.close()
	handler, err := callbacks.NewHandler(callbacks.Config{Ledger: s.db, HashKey: []byte(hashKey), Logger: log})
	if err != nil {
		return err
	}
	receiver.Store(handler)

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

	// The service settles the payouts and signs a callback for each success; then a
	// reconciliation looks every payout up and ties the file out.
	time.Sleep(demoSettle)
	sb.Settle()
	waitForCallbacks(ctx, sb, 10*time.Second)
	rec, err := reconcile.Run(ctx, s.runner, reconcile.Options{RunID: res.RunID, ReportDir: o.reportDir})
	if err != nil {
		return &exitError{code: exitAborted, err: fmt.Errorf("reconcile: %w", err)}
	}
	if !o.jsonOut {
		stats := sb.Stats()
		fmt.Fprintf(e.stdout, "callbacks: %d signed callbacks received and verified\n", stats.Callbacks)
		fmt.Fprintf(e.stdout, "reconcile %s: succeeded %d, failed %d, pending %d, mismatches %d, MYR %s\n",
			rec.RunID, rec.Succeeded, rec.Failed, rec.Pending, rec.Mismatches, rec.TotalAmount.StringFixed(2))
		for _, p := range rec.Reports {
			fmt.Fprintf(e.stdout, "  report: %s\n", p)
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
