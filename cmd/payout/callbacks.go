package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/actor"
	"github.com/payout/payout/batch/callbacks"
	"github.com/payout/payout/ledger"
)

// callbacksCmd serves the service's callbacks. It does not take the ledger's run lock: it runs
// beside `run`, `watch` and `reconcile`, and SQLite (WAL, busy timeout) orders their writes.
func callbacksCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "callbacks", "callbacks --listen ADDR [--ledger FILE] [--max-body BYTES] [-v] [--log-format text|json]")
	listen := fs.String("listen", "", "address to listen on, e.g. 127.0.0.1:8081 (required)")
	ledgerPath := new(string)
	addLedgerFlag(fs, ledgerPath)
	maxBody := fs.Int64("max-body", callbacks.DefaultMaxBody, "largest callback body in bytes; larger ones are answered 413")
	var lo logOptions
	lo.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return usageError("callbacks: unexpected argument %q", fs.Arg(0))
	}
	if *listen == "" {
		fs.Usage()
		return usageError("callbacks: --listen ADDR is required")
	}
	if *maxBody <= 0 {
		return usageError("--max-body %d: want 1 or more", *maxBody)
	}
	log, err := lo.logger(e)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(e.getenv)
	if err != nil {
		return configError(err)
	}
	if api.CheckHashKey([]byte(cfg.HashKey)) != nil {
		return configError(&ConfigError{Field: envHashKey,
			Err: fmt.Errorf("%w (or %s_FILE): callbacks cannot be verified without the hash key", errMissing, envHashKey)})
	}
	if *ledgerPath != "" {
		cfg.Ledger = *ledgerPath
	}
	db, err := ledger.Open(ctx, cfg.Ledger, stamped(ledger.Options{Logger: log, Verify: true, Actor: actor.Callback}))
	if err != nil {
		return ledgerError(err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			log.Error("close ledger", "err", err)
		}
	}()
	h, err := callbacks.NewHandler(callbacks.Config{Ledger: db, HashKey: []byte(cfg.HashKey), Logger: log, MaxBody: *maxBody})
	if err != nil {
		return configError(err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return usageError("callbacks: %v", err)
	}
	fmt.Fprintf(e.stderr, "callbacks listening on http://%s%s (health: %s)\n", ln.Addr(), callbacks.Path, callbacks.HealthPath)
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second, // a callback may wait on the ledger's busy timeout
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    32 << 10,
	}
	return serveUntilDone(ctx, log, srv, ln)
}
