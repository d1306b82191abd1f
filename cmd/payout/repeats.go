package main

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/payout/payout/batch/repeats"
)

// repeatOptions are the flags that say which rows a run holds as possible repeats.
type repeatOptions struct {
	windowDays int
	allowAll   bool
	allow      refList
}

func (o *repeatOptions) register(fs *flag.FlagSet) {
	fs.IntVar(&o.windowDays, "repeat-window", int(repeats.DefaultWindow/(24*time.Hour)),
		"hold a row that pays the account, bank and amount of a payout recorded in the last `DAYS` under another reference")
	fs.BoolVar(&o.allowAll, "allow-repeats", false, "pay rows that look like repeats of earlier payouts or rows (default: hold them)")
	fs.Var(&o.allow, "allow-repeat", "pay this row held as a possible repeat: its external_invoice_ref (`REF`; repeat the flag or separate with commas)")
}

// policy is the flags' repeat rules; commands that do not take the flags (reconcile, release)
// have the defaults.
func (o *repeatOptions) policy() (repeats.Policy, error) {
	if o.windowDays == 0 {
		return repeats.Policy{}, nil
	}
	if o.windowDays < 1 || o.windowDays > 366 {
		return repeats.Policy{}, fmt.Errorf("--repeat-window %d: want a number of days from 1 to 366", o.windowDays)
	}
	return repeats.Policy{Window: time.Duration(o.windowDays) * 24 * time.Hour, AllowAll: o.allowAll, Allow: o.allow.set}, nil
}

// refList is a flag of references, given several times or separated by commas.
type refList struct{ set map[string]bool }

func (l *refList) String() string {
	refs := make([]string, 0, len(l.set))
	for ref := range l.set {
		refs = append(refs, ref)
	}
	return strings.Join(refs, ",")
}

func (l *refList) Set(v string) error {
	if l.set == nil {
		l.set = make(map[string]bool)
	}
	for _, ref := range strings.Split(v, ",") {
		if ref = strings.TrimSpace(ref); ref != "" {
			l.set[ref] = true
		}
	}
	return nil
}
