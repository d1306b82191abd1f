package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/payout/payout/batch/pool"
)

// rateFlag is a --rate: requests per second above 0, or inf for no limit. Left unset, the
// environment's rate or the default applies; a value that would mean "no requests" is refused,
// never replaced by the default.
type rateFlag struct {
	value float64
	set   bool
}

func (f *rateFlag) String() string {
	if f == nil || !f.set {
		return ""
	}
	return strconv.FormatFloat(f.value, 'g', -1, 64)
}

func (f *rateFlag) Set(v string) error {
	r, err := parseRate(v)
	if err != nil {
		return err
	}
	f.value, f.set = r, true
	return nil
}

// countFlag is a whole-number flag whose value is checked when it is given: --workers, --burst.
type countFlag struct {
	value int
	set   bool
	parse func(string) (int, error)
}

func (f *countFlag) String() string {
	if f == nil || f.value == 0 {
		return ""
	}
	return strconv.Itoa(f.value)
}

func (f *countFlag) Set(v string) error {
	n, err := f.parse(v)
	if err != nil {
		return err
	}
	f.value, f.set = n, true
	return nil
}

func parseBurst(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, errors.New("want a whole number of requests, 1 or more")
	}
	return n, nil
}

// registerLimits registers --rate, --burst and --workers: how hard the service is asked.
func (o *runOptions) registerLimits(fs *flag.FlagSet) {
	o.burst = countFlag{value: 1, parse: parseBurst}
	o.workers = countFlag{parse: parseWorkers}
	fs.Var(&o.rate, "rate", "requests per second to the service: a number `N` above 0, or inf to lift the limit (default $"+envRate+" or 10)")
	fs.Var(&o.burst, "burst", "requests that may go at once after a pause, the average staying at --rate: `N`, 1 or more")
	fs.Var(&o.workers, "workers", fmt.Sprintf("concurrent requests: `N` from 1 to %d (default $%s, or sized from --rate and the service's observed latency: %d to %d, %d at rate inf)",
		maxWorkers, envWorkers, pool.AutoStartWorkers, pool.AutoMaxWorkers, pool.AutoUnlimitedWorkers))
}

// registerLedgerWait registers --ledger-wait: how long to wait for a ledger another process holds.
func (o *runOptions) registerLedgerWait(fs *flag.FlagSet) {
	fs.Func("ledger-wait", "when another process holds the ledger, wait this long (`D`, e.g. 10m; 0: not at all) for it to finish, then exit 1 (default $"+envLedgerWait+" or "+strings.TrimSuffix(defaultLedgerWait.String(), "0s")+"; watch --once does not wait: it leaves the inbox to its next turn and exits 0)",
		func(v string) error {
			d, err := parseLedgerWait(v)
			o.ledgerWait = &d
			return err
		})
}

func parseLedgerWait(v string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d < 0 {
		return 0, errors.New("want a duration such as 10m or 90s, 0 or more")
	}
	return d, nil
}

// maxConns is the connections the client keeps for workers: as many as the pool may grow to when
// it sizes itself.
func maxConns(workers int) int {
	if workers == 0 {
		return pool.AutoMaxWorkers
	}
	return workers
}
