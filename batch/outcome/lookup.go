package outcome

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/words"
	"github.com/payout/payout/ledger"
)

// Verdict is what a lookup by external_invoice_ref says, for the row's next move.
type Verdict int

const (
	Found       Verdict = iota // the service holds the payout
	NotFound                   // the service says, unambiguously, that it holds none
	Limited                    // 429: look again after the wait the service asks for
	AuthRefused                // the auth token was refused: nothing more can be looked up
	NoAnswer                   // no usable answer: look again after a backoff, within a bound
)

// VerdictOf classifies the error of a Get Payout (nil: found).
func VerdictOf(err error) Verdict {
	if err == nil {
		return Found
	}
	switch api.KindOf(err) {
	case api.KindNotFound:
		return NotFound
	case api.KindRateLimited:
		return Limited
	case api.KindUnauthorized:
		return AuthRefused
	}
	return NoAnswer
}

// MismatchInvoice is the reconciliation report's mismatch of an invoice number, beyond those
// package report defines.
const MismatchInvoice = "invoice number differs"

// Difference is one way the service's payout differs from the ledger's row: Kind is the
// reconciliation report's mismatch, Text says it for an event (accounts masked).
type Difference struct {
	Kind string
	Text string
}

// Differences compares what the service holds with the ledger's row. A field the service leaves
// empty is not compared.
func Differences(p ledger.Payout, got api.Payout) []Difference {
	var diffs []Difference
	if !got.Value.IsZero() && !got.Value.Equal(p.Amount) {
		diffs = append(diffs, Difference{words.MismatchAmount,
			fmt.Sprintf("service amount %s, ledger %s", got.Value.StringFixed(2), p.Amount.StringFixed(2))})
	}
	if !accountsAgree(got.PayoutAccountNumber, p.Account) {
		diffs = append(diffs, Difference{words.MismatchAccount,
			fmt.Sprintf("service account %s, ledger %s", MaskAccount(got.PayoutAccountNumber), MaskAccount(p.Account))})
	}
	if p.InvoiceNo != "" && got.PayoutInvoiceNo != "" && got.PayoutInvoiceNo != p.InvoiceNo {
		diffs = append(diffs, Difference{MismatchInvoice,
			fmt.Sprintf("service invoice %s, ledger %s", got.PayoutInvoiceNo, p.InvoiceNo)})
	}
	return diffs
}

// MaskAccount shows the last four digits of an account number only.
func MaskAccount(account string) string {
	if len(account) <= 4 {
		return "****"
	}
	return "****" + account[len(account)-4:]
}

// accountsAgree reports whether the service's account number can be the ledger's. A service may
// mask it ("******6789", "0123xxxx89"): then only the digits it shows before and after the mask
// are compared, and one that shows none (or no account at all) is not compared.
func accountsAgree(service, ledgerAccount string) bool {
	first := strings.IndexAny(service, "*xX•")
	if first < 0 {
		return service == "" || service == ledgerAccount
	}
	last := strings.LastIndexAny(service, "*xX•")
	_, size := utf8.DecodeRuneInString(service[last:])
	prefix, suffix := service[:first], service[last+size:]
	return len(prefix)+len(suffix) <= len(ledgerAccount) &&
		strings.HasPrefix(ledgerAccount, prefix) && strings.HasSuffix(ledgerAccount, suffix)
}

// DifferenceText is the differences as one text for an event, empty when there are none.
func DifferenceText(diffs []Difference) string {
	if len(diffs) == 0 {
		return ""
	}
	text := "MISMATCH: "
	for i, d := range diffs {
		if i > 0 {
			text += "; "
		}
		text += d.Text
	}
	return text
}

// AfterFound is what a lookup that found the payout does to a row that the service accepted, or
// may hold (UNKNOWN, or FAILED by a refusal the service did not keep to): the changes, none when
// the ledger already says what the service does. how begins the events' text; the differences
// from the service's payout are added to it, and recorded even when nothing else changed. An
// invoice number the ledger holds is kept.
func AfterFound(p ledger.Payout, got api.Payout, how string, diffs []Difference) []ledger.Change {
	if text := DifferenceText(diffs); text != "" {
		how += " (" + text + ")"
	}
	invoice := p.InvoiceNo
	if invoice == "" {
		invoice = got.PayoutInvoiceNo
	}
	status := got.TransactionStatus
	switch {
	case p.State != ledger.Submitted || got.Final():
		return Accepted(p.State, invoice, status, how)
	case status != p.TransactionStatus || invoice != p.InvoiceNo || len(diffs) > 0:
		return []ledger.Change{{From: ledger.Submitted, To: ledger.Submitted, InvoiceNo: invoice, TransactionStatus: status,
			Detail: fmt.Sprintf("%s: invoice %s, status %s, not final yet", how, OrNone(invoice), OrNone(status))}}
	}
	return nil
}

// Grace is when an UNKNOWN row that lookups do not find counts as never created: reported not
// found by Lookups times, spaced over Grace, and not before Grace has passed since the first.
type Grace struct {
	Grace    time.Duration
	Lookups  int
	NoResend bool // --no-resend-unknown: never
}

// Spacing spreads the lookups over the grace.
func (g Grace) Spacing() time.Duration {
	return g.Grace / time.Duration(max(1, g.Lookups-1))
}

// NotFoundVerdict is what a "not found" does to an UNKNOWN row.
type NotFoundVerdict int

const (
	LookAgain          NotFoundVerdict = iota // within the grace: look again later
	StuckForGood                              // at MaxSendAttempts: never sent again (see StuckMessage)
	KeptUnknown                               // --no-resend-unknown: left for reconciliation
	ProvenNeverCreated                        // never created, provided lookups of existing payouts work
)

// AfterNotFound decides for an UNKNOWN row p that a lookup has just reported not found: count
// lookups in a row, the first at first. With LookAgain it says when.
func AfterNotFound(p ledger.Payout, count int, first, now time.Time, g Grace) (NotFoundVerdict, time.Time) {
	// A row at the bound is never sent again: waiting out its grace would change nothing.
	stuck := Stuck(p) && !g.NoResend
	if !stuck && (count < g.Lookups || now.Sub(first) < g.Grace) {
		if count >= g.Lookups {
			return LookAgain, first.Add(g.Grace)
		}
		return LookAgain, now.Add(g.Spacing())
	}
	switch {
	case g.NoResend:
		return KeptUnknown, time.Time{}
	case stuck:
		return StuckForGood, time.Time{}
	}
	return ProvenNeverCreated, time.Time{}
}

// NotFoundCounted records a lookup's "not found" of an UNKNOWN row, the count-th in a row.
func NotFoundCounted(count int) ledger.Change {
	return ledger.Change{From: ledger.Unknown, To: ledger.Unknown, CountNotFound: true,
		Detail: fmt.Sprintf("lookup %d by external_invoice_ref: not found", count)}
}

// StuckNoted records that an UNKNOWN row not found is at MaxSendAttempts: never sent again.
func StuckNoted(p ledger.Payout) ledger.Change {
	msg := StuckMessage(p.Ref, p.Attempts)
	return ledger.Change{From: ledger.Unknown, To: ledger.Unknown, Error: msg,
		Detail: "not found by external_invoice_ref, but not sent again: " + msg}
}

// NotResent records that an UNKNOWN row, not found by count lookups over waited, is not sent
// again, and why.
func NotResent(count int, waited time.Duration, why string) ledger.Change {
	return ledger.Change{From: ledger.Unknown, To: ledger.Unknown,
		Detail: fmt.Sprintf("not found by %d lookups over %s, but not sent again: %s; needs reconciliation", count,
			waited.Round(time.Millisecond), why)}
}

// NeverCreated makes an UNKNOWN row READY again: not found by count lookups over waited while
// lookups of existing payouts work, the earlier request created nothing. send says whether this
// run sends it at once (reconcile never sends).
func NeverCreated(count int, waited time.Duration, send bool) ledger.Change {
	then := "not sent by reconcile: the next run of its file sends it"
	if send {
		then = "sending again"
	}
	return ledger.Change{From: ledger.Unknown, To: ledger.Ready, ResetNotFound: true,
		Detail: fmt.Sprintf("not found by %d lookups over %s while lookups of existing payouts work: the earlier request created nothing; %s",
			count, waited.Round(time.Millisecond), then)}
}

// RefusalConfirmed ends the error of a FAILED row whose refusal a lookup by external_invoice_ref
// confirmed. The row's RefusalConfirmed says it; the text is for people.
const RefusalConfirmed = "refusal confirmed: a lookup by external_invoice_ref found no payout"

// ConfirmRefusal decides for a row whose create the service refused (UNKNOWN, looked up first)
// and that a lookup did not find: final FAILED, its refusal confirmed, when "not found" is
// trusted; a note that it needs reconciliation otherwise.
func ConfirmRefusal(p ledger.Payout, trusted bool) ledger.Change {
	if !trusted {
		return ledger.Change{From: p.State, To: p.State,
			Detail: "refused by the service and not found by external_invoice_ref, but a payout known to exist was reported not found in this run: \"not found\" proves nothing; needs reconciliation"}
	}
	return ledger.Change{From: p.State, To: ledger.Failed, Error: confirmedError(p.LastError), ConfirmRefusal: true,
		Detail: "refused by the service, and a lookup by external_invoice_ref found no payout: nothing was created; final FAILED"}
}

func confirmedError(refusal string) string {
	if refusal == "" {
		return RefusalConfirmed
	}
	return refusal + "; " + RefusalConfirmed
}

// FailureConfirmed reports whether a FAILED row is known never to pay: the service holds it as
// FAILED (it has an invoice number), or a lookup confirmed that the service created nothing.
func FailureConfirmed(p ledger.Payout) bool {
	return p.InvoiceNo != "" || p.RefusalConfirmed
}

// RefusedCreate reports a FAILED payout whose create the service refused: it never gave an
// invoice number.
func RefusedCreate(p ledger.Payout) bool {
	return p.State == ledger.Failed && p.InvoiceNo == ""
}

// LookupGivenUp is the note on a row whose lookups got no usable answer tries times (limited:
// every one a 429), with the last error msg: the run leaves it for reconcile; reconcile reports
// it not checked. Its state stays as it is.
func LookupGivenUp(p ledger.Payout, reconcile, limited bool, tries int, msg string) ledger.Change {
	var detail string
	switch {
	case reconcile && limited:
		detail = fmt.Sprintf("reconcile: lookup rate limited %d times in a row (HTTP 429), not checked: %s", tries, msg)
	case reconcile:
		detail = fmt.Sprintf("reconcile: lookup failed %d times, not checked: %s", tries, msg)
	case limited:
		detail = fmt.Sprintf("lookup rate limited %d times in a row: left for `payout reconcile`", tries)
	default:
		detail = fmt.Sprintf("lookup failed %d times: left for `payout reconcile`: %s", tries, msg)
	}
	return ledger.Change{From: p.State, To: p.State, Error: msg, Detail: detail}
}

// NotYetVisible is the note on a row the service accepted that a lookup did not find yet: the
// invoice number stays empty until reconcile fills it in.
func NotYetVisible(p ledger.Payout) ledger.Change {
	return ledger.Change{From: p.State, To: p.State,
		Detail: "lookup after an accepted create found nothing yet; reconcile fills the invoice number"}
}
