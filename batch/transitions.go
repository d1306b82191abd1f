package batch

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/payout/payout/api"
	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/ledger"
)

// This file holds the decisions of a row's state machine that the run and reconcile share, as
// pure functions of what the ledger holds and what the service said: no ledger, no requests.

// lookupVerdict is what a lookup by external_invoice_ref says, for the row's next move.
type lookupVerdict int

const (
	lookupFound     lookupVerdict = iota // the service holds the payout
	lookupNotFound                       // the service says, unambiguously, that it holds none
	lookupThrottled                      // 429: look again after the wait the service asks for
	lookupStop                           // the auth token was refused: nothing more can be looked up
	lookupRetry                          // no usable answer: look again after a backoff, within a bound
)

// verdictOf classifies the error of a Get Payout (nil: found).
func verdictOf(err error) lookupVerdict {
	if err == nil {
		return lookupFound
	}
	switch api.KindOf(err) {
	case api.KindNotFound:
		return lookupNotFound
	case api.KindRateLimited:
		return lookupThrottled
	case api.KindUnauthorized:
		return lookupStop
	}
	return lookupRetry
}

// difference is one way the service's payout differs from the ledger's row: kind is the
// reconciliation report's mismatch, text says it for an event (accounts masked).
type difference struct {
	kind string
	text string
}

// differences compares what the service holds with the ledger's row. A field the service leaves
// empty is not compared.
func differences(p ledger.Payout, got api.Payout) []difference {
	var diffs []difference
	if !got.Value.IsZero() && !got.Value.Equal(p.Amount) {
		diffs = append(diffs, difference{report.MismatchAmount,
			fmt.Sprintf("service amount %s, ledger %s", got.Value.StringFixed(2), p.Amount.StringFixed(2))})
	}
	if !accountsAgree(got.PayoutAccountNumber, p.Account) {
		diffs = append(diffs, difference{report.MismatchAccount,
			fmt.Sprintf("service account %s, ledger %s", MaskAccount(got.PayoutAccountNumber), MaskAccount(p.Account))})
	}
	if p.InvoiceNo != "" && got.PayoutInvoiceNo != "" && got.PayoutInvoiceNo != p.InvoiceNo {
		diffs = append(diffs, difference{mismatchInvoice,
			fmt.Sprintf("service invoice %s, ledger %s", got.PayoutInvoiceNo, p.InvoiceNo)})
	}
	return diffs
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

// differenceText is the differences as one text for an event, empty when there are none.
func differenceText(diffs []difference) string {
	if len(diffs) == 0 {
		return ""
	}
	text := "MISMATCH: "
	for i, d := range diffs {
		if i > 0 {
			text += "; "
		}
		text += d.text
	}
	return text
}

// backoffs are the waits between tries.
type backoffs struct{ base, max time.Duration }

// retryWait is the wait the service asked for (Retry-After), else a backoff.
func (b backoffs) retryWait(err error, attempt int) time.Duration {
	var apiErr *api.Error
	if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
		return apiErr.RetryAfter
	}
	return backoff(b.base, b.max, attempt)
}

// rateLimitedRetry is the bound on 429s shared by sends and lookups, in runs and
// reconciliations: the wait the service asked for, and the task to try after it, or nil once the
// task has been limited maxRateLimited times in a row.
func rateLimitedRetry(err error, t task, now time.Time, b backoffs) (time.Duration, *task) {
	wait := b.retryWait(err, t.attempt)
	if t.limited+1 >= maxRateLimited {
		return wait, nil
	}
	return wait, &task{ref: t.ref, kind: t.kind, at: now.Add(wait), attempt: t.attempt, limited: t.limited + 1, refused: t.refused}
}

// afterSend is what the answer to a row's POST does: the changes that record it (from
// SUBMITTING), and the outcome, with the follow-up task if there is one. A send is counted when
// it reached, or may have reached, the service (see MaxSendAttempts).
func afterSend(t task, created api.CreateResult, err error, now time.Time, b backoffs) ([]ledger.Change, outcome) {
	if err == nil {
		changes := acceptedChanges(ledger.Submitting, created.InvoiceNo, created.TransactionStatus, "accepted by the service")
		changes[0].CountAttempt = true
		o := outcome{task: t, serviceOK: true, rowDone: created.InvoiceNo != ""}
		if created.InvoiceNo == "" {
			// The create answer carried no invoice number: the lookup fills it in.
			o.next = &task{ref: t.ref, kind: taskLookup, at: now}
		}
		return changes, o
	}
	msg := errorText(err)
	change := func(to ledger.State, counted bool, detail string) []ledger.Change {
		return []ledger.Change{{Ref: t.ref, From: ledger.Submitting, To: to, Error: msg, CountAttempt: counted, Detail: detail}}
	}
	switch api.KindOf(err) {
	case api.KindRejected:
		// A service has been seen to create the payout and still answer "fail": until a lookup
		// says otherwise, the payout may exist, and a FAILED row invites paying it again.
		return change(ledger.Unknown, true, "refused by the service: "+msg+"; looking it up by external_invoice_ref before it is final FAILED"),
			outcome{task: t, serviceOK: true, next: &task{ref: t.ref, kind: taskLookup, at: now, refused: true}}
	case api.KindDuplicate:
		return change(ledger.Unknown, true, "the service says this reference already exists: looking it up: "+msg),
			outcome{task: t, serviceOK: true, next: &task{ref: t.ref, kind: taskLookup, at: now}}
	case api.KindRetryable:
		return change(ledger.Ready, false, "not sent, the request never reached the service: "+msg),
			outcome{task: t, failure: true, next: &task{ref: t.ref, kind: taskSend, at: now.Add(backoff(b.base, b.max, t.attempt)), attempt: t.attempt + 1}}
	case api.KindRateLimited:
		wait, retry := rateLimitedRetry(err, t, now, b)
		if retry == nil {
			return change(ledger.Ready, false, fmt.Sprintf("rate limited by the service %d times in a row, nothing was created; not sent in this run", t.limited+1)),
				outcome{task: t, throttled: true, pause: now.Add(wait), rowDone: true}
		}
		return change(ledger.Ready, false, fmt.Sprintf("rate limited by the service, nothing was created; retrying after %s", wait)),
			outcome{task: t, throttled: true, pause: now.Add(wait), next: retry}
	case api.KindUnauthorized:
		return change(ledger.Ready, false, "the service refused the auth token; nothing was created"),
			outcome{task: t, fatal: ErrUnauthorized}
	case api.KindNotFound:
		return change(ledger.Unknown, false, "the service answered not found to a create: "+msg),
			outcome{task: t, fatal: errors.New("the service answered 404 to a create: check PAYOUT_BASE_URL")}
	}
	// Timeout, broken connection, 5xx: the payout may exist. It is looked up, never resent blindly.
	return change(ledger.Unknown, true, "no usable answer, the payout may exist; looking it up by external_invoice_ref: "+msg),
		outcome{task: t, failure: true, next: &task{ref: t.ref, kind: taskLookup, at: now.Add(backoff(b.base, b.max, 0))}}
}

// graceRule is when an UNKNOWN row that lookups do not find counts as never created: reported
// not found by lookups times, spaced over grace, and not before grace has passed since the first.
type graceRule struct {
	grace    time.Duration
	lookups  int
	noResend bool // --no-resend-unknown: never
}

// spacing spreads the lookups over the grace.
func (g graceRule) spacing() time.Duration {
	return g.grace / time.Duration(max(1, g.lookups-1))
}

// notFoundVerdict is what a "not found" does to an UNKNOWN row.
type notFoundVerdict int

const (
	lookAgain          notFoundVerdict = iota // within the grace: look again later
	stuckForGood                              // at MaxSendAttempts: never sent again (see StuckMessage)
	keptUnknown                               // --no-resend-unknown: left for reconciliation
	provenNeverCreated                        // never created, provided lookups of existing payouts work
)

// afterNotFound decides for an UNKNOWN row p that a lookup has just reported not found: count
// lookups in a row, the first at first. With lookAgain it says when.
func afterNotFound(p ledger.Payout, count int, first, now time.Time, g graceRule) (notFoundVerdict, time.Time) {
	// A row at the bound is never sent again: waiting out its grace would change nothing.
	stuck := Stuck(p) && !g.noResend
	if !stuck && (count < g.lookups || now.Sub(first) < g.grace) {
		if count >= g.lookups {
			return lookAgain, first.Add(g.grace)
		}
		return lookAgain, now.Add(g.spacing())
	}
	switch {
	case g.noResend:
		return keptUnknown, time.Time{}
	case stuck:
		return stuckForGood, time.Time{}
	}
	return provenNeverCreated, time.Time{}
}

// afterFound is what a lookup that found the payout does to a row that the service accepted, or
// may hold (UNKNOWN, or FAILED by a refusal the service did not keep to): the changes, none when
// the ledger already says what the service does. how begins the events' text; the differences
// from the service's payout are added to it, and recorded even when nothing else changed. An
// invoice number the ledger holds is kept.
func afterFound(p ledger.Payout, got api.Payout, how string, diffs []difference) []ledger.Change {
	if text := differenceText(diffs); text != "" {
		how += " (" + text + ")"
	}
	invoice := p.InvoiceNo
	if invoice == "" {
		invoice = got.PayoutInvoiceNo
	}
	status := got.TransactionStatus
	switch {
	case p.State != ledger.Submitted || got.Final():
		return acceptedChanges(p.State, invoice, status, how)
	case status != p.TransactionStatus || invoice != p.InvoiceNo || len(diffs) > 0:
		return []ledger.Change{{From: ledger.Submitted, To: ledger.Submitted, InvoiceNo: invoice, TransactionStatus: status,
			Detail: fmt.Sprintf("%s: invoice %s, status %s, not final yet", how, orNone(invoice), orNone(status))}}
	}
	return nil
}
