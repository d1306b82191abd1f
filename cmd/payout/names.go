package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/payout/payout/ledger"
)

// displayNamesFlag is the sandbox's repeatable --display-name KEY=NAME: the name its bank holds
// for a payout's account, by external_invoice_ref or account number.
type displayNamesFlag map[string]string

func (f displayNamesFlag) String() string {
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + f[k]
	}
	return strings.Join(parts, ",")
}

func (f displayNamesFlag) Set(v string) error {
	key, name, ok := strings.Cut(v, "=")
	key, name = strings.TrimSpace(key), strings.TrimSpace(name)
	if !ok || key == "" || name == "" {
		return errors.New("want REF=NAME or ACCOUNT=NAME, e.g. PAY-001=LIM WEI JIE")
	}
	f[key] = name
	return nil
}

// nameCheckText says how the bank's name for the account compares with the recipient.
func nameCheckText(c ledger.NameCheck) string {
	switch c.Check {
	case ledger.NameMatch:
		return "match"
	case ledger.NameMismatch:
		return "MISMATCH: the bank holds another name for this account than the recipient; check who was paid"
	}
	return "not compared (the recipient is a reference, not a name)"
}

// showNameMismatches tells, under `payout status`, how many payouts went to an account whose
// bank holds another name than the recipient, and which (at most ten).
func showNameMismatches(ctx context.Context, w io.Writer, db *ledger.DB) error {
	mismatches, err := db.NameChecks(ctx, ledger.NameFilter{Mismatches: true})
	if err != nil || len(mismatches) == 0 {
		return err
	}
	refs := make([]string, 0, min(len(mismatches), 10))
	for _, m := range mismatches[:min(len(mismatches), 10)] {
		refs = append(refs, m.Ref)
	}
	more := ""
	if len(mismatches) > len(refs) {
		more = fmt.Sprintf(" and %d more", len(mismatches)-len(refs))
	}
	_, err = fmt.Fprintf(w, "\nname mismatches: %s to an account whose bank holds another name than the recipient: %s%s (see `payout status REF`).\n",
		payoutsWent(len(mismatches)), strings.Join(refs, ", "), more)
	return err
}

// withNameCheck adds, after the recipient among a payout's fields, the name its bank holds for
// the account and how it compares, once a callback has said it.
func withNameCheck(fields [][2]string, c ledger.NameCheck) [][2]string {
	if c.DisplayName == "" {
		return fields
	}
	out := make([][2]string, 0, len(fields)+2)
	for _, f := range fields {
		out = append(out, f)
		if f[0] == "recipient" {
			out = append(out, [2]string{"name at the bank", c.DisplayName}, [2]string{"name check", nameCheckText(c)})
		}
	}
	return out
}

// demoDisplayNames are the names the demo's bank holds for some of the sample's accounts, as
// banks write them: shortened, abbreviated, cut at a length limit, and one that is someone else.
// Every other callback carries the recipient in capitals.
var demoDisplayNames = map[string]string{
	"PAY-2026-11-001": "AHMAD FAIZAL B ISMAIL",
	"PAY-2026-11-004": "TAN WEI JIE",
	"PAY-2026-11-005": "MUTHU KRISHNAN",
	"PAY-2026-11-009": "MUHAMMAD HAFIZ BIN ABDULLAH",
	"PAY-2026-11-026": "SYED AMIR BIN SYED A",
}

// printDemoNames ends the demo's summary with the payouts whose bank holds another name than
// the recipient.
func printDemoNames(ctx context.Context, w io.Writer, db *ledger.DB) error {
	mismatches, err := db.NameChecks(ctx, ledger.NameFilter{Mismatches: true})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "name check: %s to an account whose bank holds another name than the recipient\n", payoutsWent(len(mismatches)))
	for _, m := range mismatches {
		fmt.Fprintf(w, "  %s: recipient %q, the bank holds %q (see `payout status %s`)\n", m.Ref, m.Recipient, m.DisplayName, m.Ref)
	}
	return nil
}

func payoutsWent(n int) string {
	if n == 1 {
		return "1 payout went"
	}
	return fmt.Sprintf("%d payouts went", n)
}
