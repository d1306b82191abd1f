package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/payout/payout/api/sandbox"
)

func sandboxCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "sandbox", "sandbox --listen ADDR [fault flags]")
	listen := fs.String("listen", "127.0.0.1:8080", "address to listen on")
	var lo logOptions
	lo.register(fs)
	seed := fs.Int64("seed", 1, "seed of the fault injection")
	latency := fs.Duration("latency", 0, "added latency of every request")
	errorRate := fs.Float64("error-rate", 0, "share of requests answered 503 before anything is created (0..1)")
	lostRate := fs.Float64("lost-rate", 0, "share of creates whose payout is created but whose answer is lost (0..1)")
	rateLimit := fs.Float64("rate-limit", 0, "requests per second above which the service answers 429 (0: none)")
	settle := fs.Duration("settle-after", 2*time.Second, "time a payout stays PENDING")
	failSuffix := fs.String("fail-suffix", "000", "accounts ending in this fail (comma-separated list; empty: none)")
	rejectDup := fs.Bool("reject-duplicates", false, "refuse a second create with the same external_invoice_ref (default: pay it again)")
	callbacks := fs.Bool("callbacks", true, "send signed callbacks for successful payouts")
	displayNames := displayNamesFlag{}
	fs.Var(displayNames, "display-name", "`REF=NAME`: the callback of the payout whose external_invoice_ref (or account number) is REF carries NAME as display_name, the name its bank holds (repeatable; default: the recipient in capitals)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	log, err := lo.logger(e)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(e.getenv)
	if err != nil {
		return configError(err)
	}
	if cfg.AuthToken == "" || cfg.HashKey == "" {
		return configError(errors.New("the sandbox needs PAYOUT_AUTH_TOKEN and PAYOUT_HASH_KEY (or their _FILE forms): the tokens it accepts and signs with"))
	}
	opts := sandbox.Options{
		AuthToken: cfg.AuthToken, HashKey: []byte(cfg.HashKey), Seed: *seed, SettleAfter: *settle,
		FailSuffixes: splitList(*failSuffix), SendCallbacks: *callbacks, DisplayNames: displayNames, Logger: log,
		Faults: sandbox.Faults{Latency: *latency, ErrorRate: *errorRate, LostResponseRate: *lostRate, RateLimit: *rateLimit},
	}
	if *rejectDup {
		opts.DuplicatePolicy = sandbox.RejectDuplicates
	}
	srv := sandbox.New(opts)
	defer srv.Close()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return usageError("sandbox: %v", err)
	}
	fmt.Fprintf(e.stderr, "sandbox listening on http://%s (PAYOUT_BASE_URL)\n", ln.Addr())
	return serveUntilDone(ctx, log, &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}, ln)
}

// serveUntilDone serves until ctx ends, then shuts down gracefully.
func serveUntilDone(ctx context.Context, log *slog.Logger, srv *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return &exitError{code: exitAborted, err: err}
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		log.Warn("shutdown", "err", err)
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
