package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/payout/payout/batch"
)

// Environment variables of DESIGN.md.
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
	Workers        int
}

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

// loadConfig reads the environment. Secrets come from VAR or VAR_FILE, never from a flag.
func loadConfig(getenv func(string) string) (config, error) {
	c := config{
		BaseURL:        strings.TrimSpace(getenv(envBaseURL)),
		VirtualPoolRef: strings.TrimSpace(getenv(envVirtualPool)),
		CallbackURL:    strings.TrimSpace(getenv(envCallbackURL)),
		RedirectURL:    strings.TrimSpace(getenv(envRedirectURL)),
		Ledger:         getenv(envLedger),
		Rate:           batch.DefaultRate,
		Workers:        batch.DefaultWorkers,
	}
	if c.Ledger == "" {
		c.Ledger = defaultLedger
	}
	var err error
	if c.AuthToken, err = secret(getenv, envAuthToken); err != nil {
		return c, err
	}
	if c.HashKey, err = secret(getenv, envHashKey); err != nil {
		return c, err
	}
	if v := getenv(envRate); v != "" {
		c.Rate, err = strconv.ParseFloat(v, 64)
		if err != nil || c.Rate <= 0 {
			return c, &ConfigError{Field: envRate, Value: v, Err: errors.New("want a number of requests per second above 0")}
		}
	}
	if v := getenv(envWorkers); v != "" {
		c.Workers, err = strconv.Atoi(v)
		if err != nil || c.Workers <= 0 || c.Workers > 256 {
			return c, &ConfigError{Field: envWorkers, Value: v, Err: errors.New("want a whole number from 1 to 256")}
		}
	}
	return c, nil
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
		return "", &ConfigError{Field: name + "_FILE", Value: file, Err: errors.New("cannot read the file")}
	}
	if info.Size() > maxSecretFile {
		return "", &ConfigError{Field: name + "_FILE", Value: file, Err: errors.New("file is too large for a secret")}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", &ConfigError{Field: name + "_FILE", Value: file, Err: errors.New("cannot read the file")}
	}
	return strings.TrimRight(string(data), "\r\n"), nil
}

// validateService checks what talking to the service needs.
func (c config) validateService() error {
	if c.BaseURL == "" {
		return &ConfigError{Field: envBaseURL, Err: errMissing}
	}
	if c.AuthToken == "" {
		return &ConfigError{Field: envAuthToken, Err: fmt.Errorf("%w (or %s_FILE)", errMissing, envAuthToken)}
	}
	return nil
}

// validateSubmit checks what sending payouts needs, beyond the service.
func (c config) validateSubmit() error {
	if err := c.validateService(); err != nil {
		return err
	}
	for _, f := range []struct{ name, value string }{
		{envVirtualPool, c.VirtualPoolRef}, {envCallbackURL, c.CallbackURL}, {envRedirectURL, c.RedirectURL},
	} {
		if f.value == "" {
			return &ConfigError{Field: f.name, Err: errMissing}
		}
	}
	return nil
}

// configError turns a configuration problem into exit code 2.
func configError(err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: exitUsage, err: fmt.Errorf("configuration: %w", err)}
}
