package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/audit"
	"github.com/payout/payout/batch/console"
	"github.com/payout/payout/batch/intake"
	"github.com/payout/payout/ledger"
)

// serveCmd is `payout serve DIR`: the web console for folder mode's directory DIR.
func serveCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "serve", "serve --listen ADDR [--cert FILE --key FILE] [--rp-id HOST] [--origin URL] [--providers FILE] [--max-upload BYTES] [--ledger FILE] DIR")
	listen := fs.String("listen", "", "address to listen on: with --cert and --key any, else a loopback one behind your TLS proxy (required)")
	certFile := fs.String("cert", "", "TLS certificate chain `FILE` (PEM)")
	keyFile := fs.String("key", "", "TLS private key `FILE` (PEM)")
	rpID := fs.String("rp-id", "", "relying-party id: the console's host name, to which every passkey is bound (default: the --origin's host, or localhost)")
	origin := fs.String("origin", "", "the URL browsers reach the console at, e.g. https://payout.example.com (default: https://RP-ID:PORT, or http://localhost:PORT)")
	providers := fs.String("providers", "", "read the provider list from `FILE` (payout providers --json) instead of asking the service")
	maxUpload := fs.Int64("max-upload", console.DefaultMaxUpload, "largest file that may be dropped, in bytes")
	ledgerPath := fs.String("ledger", "", "ledger (default $"+envLedger+" or "+defaultLedger+"): every sign-in and signature becomes an event of its chain")
	var lo logOptions
	lo.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usageError("serve: name folder mode's directory (the DIR of payout watch DIR)")
	}
	if *listen == "" {
		fs.Usage()
		return usageError("serve: --listen ADDR is required")
	}
	if (*certFile == "") != (*keyFile == "") {
		return usageError("serve: give both --cert and --key, or neither (plain HTTP on a loopback address, behind a TLS proxy)")
	}
	log, err := lo.logger(e)
	if err != nil {
		return err
	}
	allowed := e.getenv(approval.EnvAllowedSigners)
	if allowed == "" {
		return configError(&ConfigError{Field: approval.EnvAllowedSigners, Err: errMissing})
	}
	cfg, err := loadConfig(e.getenv)
	if err != nil {
		return configError(err)
	}
	if *ledgerPath != "" {
		cfg.Ledger = *ledgerPath
	}
	// Like callbacks, the console does not take the run lock: it appends events beside runs.
	db, err := ledger.Open(ctx, cfg.Ledger, stamped(ledger.Options{Logger: log, Verify: true}))
	if err != nil {
		return ledgerError(err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			log.Error("close ledger", "err", err)
		}
	}()
	ln, err := serveListener(*listen, *certFile, *keyFile, *rpID, origin)
	if err != nil {
		return err
	}
	h, err := console.New(console.Config{RPID: *rpID, Origin: *origin, AllowedSigners: allowed, Folder: fs.Arg(0),
		Planner: servePlanner{e: e, providers: *providers}, Ledger: db, Sessions: db.ConsoleSessions(), Zone: lo.zone, MaxUpload: *maxUpload, Logger: log,
		Packs: func(ctx context.Context, runID, out, actor string) error {
			_, err := audit.Export(ctx, db, audit.ExportOptions{RunID: runID, Out: out, Actor: actor, Now: time.Now(), Zone: lo.zone, AllowedSigners: allowed})
			return err
		}})
	if err != nil {
		ln.Close()
		return usageError("serve: %v", err)
	}
	fmt.Fprintf(e.stderr, "console listening on %s for %s\n", ln.Addr(), *origin)
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       5 * time.Minute, // an upload over a slow line
		WriteTimeout:      5 * time.Minute, // a plan of 200,000 rows
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    32 << 10,
	}
	return serveUntilDone(ctx, log, srv, ln)
}

func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serveListener listens on listen, with TLS when certFile and keyFile are given (else only on
// loopback, behind a TLS proxy), and fills in *origin when it was not given: the name browsers
// reach the console by, to which passkeys are bound.
func serveListener(listen, certFile, keyFile, rpID string, origin *string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, usageError("serve: --listen %q: want HOST:PORT", listen)
	}
	tlsOn := certFile != ""
	if !tlsOn && !loopbackHost(host) {
		return nil, usageError("serve: --listen %s without --cert and --key would send sessions in plain text: listen on 127.0.0.1 behind a TLS proxy, or give a certificate", listen)
	}
	var tlsConfig *tls.Config
	if tlsOn {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, usageError("serve: --cert/--key: %v", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, usageError("serve: %v", err)
	}
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	if *origin == "" {
		port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		switch {
		case tlsOn && rpID == "":
			ln.Close()
			return nil, usageError("serve: with a certificate, give --rp-id or --origin: the name browsers reach the console by")
		case tlsOn:
			*origin = "https://" + net.JoinHostPort(rpID, port)
		default:
			*origin = "http://" + net.JoinHostPort("localhost", port)
		}
	}
	return ln, nil
}

// servePlanner reads a file's plan as `payout plan FILE` does, with the environment serve runs in.
type servePlanner struct {
	e         *env
	providers string
}

func (p servePlanner) Plan(ctx context.Context, path string) (intake.Plan, map[int64]string, error) {
	return p.plan(ctx, path)
}

// PlanWithRepeats reads a file's plan as `payout plan --allow-repeats FILE` does: what signers
// sign to accept its rows held as possible repeats.
func (p servePlanner) PlanWithRepeats(ctx context.Context, path string) (intake.Plan, map[int64]string, error) {
	return p.plan(ctx, path, "--allow-repeats")
}

func (p servePlanner) plan(ctx context.Context, path string, flags ...string) (intake.Plan, map[int64]string, error) {
	args := append(flags, path)
	if p.providers != "" {
		args = append([]string{"--providers", p.providers}, args...)
	}
	s, plan, _, _, err := planSession(ctx, p.e, "serve", "", args, nil)
	if err != nil {
		return plan, nil, err
	}
	defer s.close()
	var list []api.Provider
	if s.client != nil {
		list, err = s.client.ListProviders(ctx)
	} else {
		list, err = loadSavedProviders(p.providers)
	}
	if err != nil {
		return plan, nil, err
	}
	banks := make(map[int64]string, len(list))
	for _, pr := range list {
		banks[pr.ID] = pr.Name
	}
	return plan, banks, nil
}
