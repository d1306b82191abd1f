package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/payout/payout"
	"github.com/payout/payout/api/sandbox"
)

// demoCmd pays the embedded sample file through a sandbox on loopback, end to end: nothing to set
// up, nothing leaves the machine.
func demoCmd(ctx context.Context, e *env, args []string) error {
	var o runOptions
	fs := newFlagSet(e, "demo", "demo [--report-dir DIR] [--keep DIR]")
	o.register(fs)
	fs.BoolVar(&o.jsonOut, "json", false, "print the run's summary as JSON on stdout")
	keep := fs.String("keep", "", "keep the demo's ledger and input in this folder (default: a temporary folder, removed)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	o.verbose = o.verbose || !o.jsonOut // the demo is for people: show the summary
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
	token, hashKey := randomSecret(), randomSecret()
	log, err := o.logger(e.stderr)
	if err != nil {
		return err
	}
	srv := sandbox.New(sandbox.Options{AuthToken: token, HashKey: []byte(hashKey), SettleAfter: 50 * time.Millisecond, Logger: log})
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	httpSrv := &http.Server{Handler: srv, ReadHeaderTimeout: 5 * time.Second}
	go httpSrv.Serve(ln)
	defer httpSrv.Close()
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(e.stderr, "demo: sandbox on %s, paying %s\n", base, payout.SamplePayrollName)

	// The demo's own environment: secrets it just made, a ledger in its folder. Nothing of the
	// caller's environment is used, so a demo can never reach a real service.
	demoEnv := map[string]string{
		envBaseURL: base, envAuthToken: token, envHashKey: hashKey,
		envVirtualPool: "DEMO-POOL-001", envCallbackURL: base + "/demo/callback", envRedirectURL: base + "/demo/return",
		envLedger: filepath.Join(work, "demo-ledger.db"), envRate: "50", envWorkers: "8",
	}
	de := &env{stdin: e.stdin, stdout: e.stdout, stderr: e.stderr, getenv: func(k string) string { return demoEnv[k] }}
	s, err := newSession(ctx, de, &o, false)
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
	return nil
}

func randomSecret() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
