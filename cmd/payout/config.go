package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/payout/payout/batch"
)

// Environment variables read by the commands.
const (
	envBaseURL       = "PAYOUT_BASE_URL"
	envAuthToken     = "PAYOUT_AUTH_TOKEN"
	envHashKey       = "PAYOUT_HASH_KEY"
	envVirtualPool   = "PAYOUT_VIRTUAL_POOL_REF"
	envCallbackURL   = "PAYOUT_CALLBACK_URL"
	envRedirectURL   = "PAYOUT_REDIRECT_URL"
	envLedger        = "PAYOUT_LEDGER"
	envRate          = "PAYOUT_RATE"
	envWorkers       = "PAYOUT_WORKERS"
	envChunkRows     = "PAYOUT_CHUNK_ROWS"
	envLedgerWait    = "PAYOUT_LEDGER_WAIT"
	defaultLedger    = "payout-ledger.db"
	defaultReportDir = "reports"
	maxSecretFile    = 64 << 10
)

// config is the environment's part of a command's configuration. Flags override it afterwards.
type config struct {
	BaseURL        string
	AuthToken      string // secret: never printed
	HashKey        string // secret: never printed
	VirtualPoolRef string
	CallbackURL    string
	RedirectURL    string
	Ledger         string
	Rate           float64
	Workers        int // 0: the pool sizes itself from the rate and the service's latency
	// ChunkRows is how many rows a run records and hands to its workers at a time.
	ChunkRows int
	// LedgerWait bounds how long a command that pays or reconciles waits for another process to
	// release the ledger's lock before it gives up (exit 1); 0: it does not wait.
	LedgerWait time.Duration
}

// defaultLedgerWait outlasts a routine overlap of the README's crontab (a watch --once paying a
// file, a reconcile) and is short enough that a stuck holder is still reported the same night.
const defaultLedgerWait = 10 * time.Minute

// ConfigError names the setting that is wrong. It never carries a secret's value.
type ConfigError struct {
	Field string
	Value string
	Err   error
}

func (e *ConfigError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("%s: %v", e.Field, e.Err)
	}
	return fmt.Sprintf("%s=%q: %v", e.Field, e.Value, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

var errMissing = errors.New("not set")

// configErrors are all the configuration problems found at once, so that a person fixes them in
// one go rather than one per try.
type configErrors []error

func (e configErrors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (e configErrors) Unwrap() []error { return e }

// joinConfig returns nil, the one error, or all of them.
func joinConfig(errs ...error) error {
	var all configErrors
	for _, err := range errs {
		var more configErrors
		switch {
		case err == nil:
		case errors.As(err, &more):
			all = append(all, more...)
		default:
			all = append(all, err)
		}
	}
	switch len(all) {
	case 0:
		return nil
	case 1:
		return all[0]
	}
	return all
}

// missingError names every required setting that is not set, in one message.
type missingError []string

func (e missingError) Error() string { return strings.Join(e, ", ") + " not set" }

func (e missingError) Is(target error) bool { return target == errMissing }

// loadConfig reads the environment. Secrets come from VAR or VAR_FILE, never from a flag.
func loadConfig(getenv func(string) string) (config, error) {
	c := config{
		BaseURL:        strings.TrimSpace(getenv(envBaseURL)),
		VirtualPoolRef: strings.TrimSpace(getenv(envVirtualPool)),
		CallbackURL:    strings.TrimSpace(getenv(envCallbackURL)),
		RedirectURL:    strings.TrimSpace(getenv(envRedirectURL)),
		Ledger:         getenv(envLedger),
		Rate:           batch.DefaultRate,
		LedgerWait:     defaultLedgerWait,
	}
	if c.Ledger == "" {
		c.Ledger = defaultLedger
	}
	var errs []error
	var err error
	if c.AuthToken, err = secret(getenv, envAuthToken); err != nil {
		errs = append(errs, err)
	}
	if c.HashKey, err = secret(getenv, envHashKey); err != nil {
		errs = append(errs, err)
	}
	if v := getenv(envRate); v != "" {
		if c.Rate, err = parseRate(v); err != nil {
			errs = append(errs, &ConfigError{Field: envRate, Value: v, Err: err})
		}
	}
	if v := getenv(envWorkers); v != "" {
		if c.Workers, err = parseWorkers(v); err != nil {
			errs = append(errs, &ConfigError{Field: envWorkers, Value: v, Err: err})
		}
	}
	if v := getenv(envLedgerWait); v != "" {
		if c.LedgerWait, err = parseLedgerWait(v); err != nil {
			errs = append(errs, &ConfigError{Field: envLedgerWait, Value: v, Err: err})
		}
	}
	if v := getenv(envChunkRows); v != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 || n > maxChunkRows {
			errs = append(errs, &ConfigError{Field: envChunkRows, Value: v,
				Err: fmt.Errorf("want a number of rows from 1 to %d", maxChunkRows)})
		}
		c.ChunkRows = n
	}
	return c, joinConfig(errs...)
}

const (
	maxWorkers   = 256
	maxChunkRows = 100_000
)

// parseRate reads a rate of requests per second: above 0, or "inf" for no limit.
func parseRate(v string) (float64, error) {
	r, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(r) || r <= 0 {
		return 0, errors.New("want a number of requests per second above 0, or inf for no limit")
	}
	if math.IsInf(r, 1) {
		// The limiter, and the pool sizing from it, know "no limit" by this value alone.
		return float64(rate.Inf), nil
	}
	return r, nil
}

// parseWorkers reads a number of concurrent requests.
func parseWorkers(v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n <= 0 || n > maxWorkers {
		return 0, fmt.Errorf("want a whole number from 1 to %d", maxWorkers)
	}
	return n, nil
}

// secret reads NAME, or the file named by NAME_FILE. Trailing newlines of a file are dropped.
func secret(getenv func(string) string, name string) (string, error) {
	value, file := getenv(name), getenv(name+"_FILE")
	if value != "" && file != "" {
		return "", &ConfigError{Field: name, Err: fmt.Errorf("set %s or %s_FILE, not both", name, name)}
	}
	if file == "" {
		return value, nil
	}
	info, err := os.Stat(file)
	if err != nil {
		return "", &ConfigError{Field: name + "_FILE", Value: file, Err: fileReason(err)}
	}
	if info.Size() > maxSecretFile {
		return "", &ConfigError{Field: name + "_FILE", Value: file, Err: errors.New("file is too large for a secret")}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", &ConfigError{Field: name + "_FILE", Value: file, Err: fileReason(err)}
	}
	return strings.TrimRight(string(data), "\r\n"), nil
}

// validateService checks what talking to the service needs.
func (c config) validateService() error {
	return missingOrNil(c.missingService())
}

// validateSubmit checks what sending payouts needs: the service, and the payout settings.
func (c config) validateSubmit() error {
	missing := c.missingService()
	for _, f := range []struct{ name, value string }{
		{envVirtualPool, c.VirtualPoolRef}, {envCallbackURL, c.CallbackURL}, {envRedirectURL, c.RedirectURL},
	} {
		if f.value == "" {
			missing = append(missing, f.name)
		}
	}
	return missingOrNil(missing)
}

func (c config) missingService() []string {
	var missing []string
	if c.BaseURL == "" {
		missing = append(missing, envBaseURL)
	}
	if c.AuthToken == "" {
		missing = append(missing, envAuthToken+" (or "+envAuthToken+"_FILE)")
	}
	return missing
}

func missingOrNil(names []string) error {
	if len(names) == 0 {
		return nil
	}
	return missingError(names)
}

// configError turns a configuration problem into exit code 2.
func configError(err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: exitUsage, err: fmt.Errorf("configuration: %w", err)}
}
