package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// CreateResult is what Create Payout answered. The service does not document this answer, so
// every field may be empty: when InvoiceNo is empty, look the payout up by external_invoice_ref.
type CreateResult struct {
	InvoiceNo         string          // payout_invoice_no or invoice_no, if sent
	TransactionStatus string          // transaction_status, if sent
	Raw               json.RawMessage // the envelope's data as received (may be null)
	Payout            *Payout         // data decoded as a payout, if it looked like one
}

// CreatePayout submits one payout. It sends the request exactly once: it never retries and never
// follows redirects. Errors are *Error; KindOutcomeUnknown means the payout may exist.
func (c *Client) CreatePayout(ctx context.Context, p CreatePayoutRequest) (CreateResult, error) {
	const op = "create payout"
	body, err := json.Marshal(p)
	if err != nil {
		return CreateResult{}, &Error{Op: op, Kind: KindRejected, Err: err}
	}
	res, err := c.do(ctx, request{op: op, method: http.MethodPost, path: PathPayout, body: body, create: true})
	if err != nil {
		return CreateResult{}, err
	}
	return decodeCreate(res.env.Data), nil
}

// decodeCreate reads whatever the create answer's data holds; it never fails, because the
// service accepted the payout and the caller must record that.
func decodeCreate(data json.RawMessage) CreateResult {
	r := CreateResult{Raw: data}
	t := bytes.TrimSpace(data)
	if len(t) == 0 || t[0] != '{' {
		return r
	}
	var probe struct {
		Payout json.RawMessage `json:"payout"`
	}
	if json.Unmarshal(t, &probe) == nil && len(bytes.TrimSpace(probe.Payout)) > 0 && bytes.TrimSpace(probe.Payout)[0] == '{' {
		t = bytes.TrimSpace(probe.Payout)
	}
	var p Payout
	if err := json.Unmarshal(t, &p); err != nil {
		// Amounts in an unexpected form: keep at least the identifiers.
		var ids struct {
			PayoutInvoiceNo   flexString `json:"payout_invoice_no"`
			InvoiceNo         flexString `json:"invoice_no"`
			TransactionStatus flexString `json:"transaction_status"`
		}
		if json.Unmarshal(t, &ids) == nil {
			r.InvoiceNo = string(ids.PayoutInvoiceNo)
			if r.InvoiceNo == "" {
				r.InvoiceNo = string(ids.InvoiceNo)
			}
			r.TransactionStatus = normalizeStatus(string(ids.TransactionStatus))
		}
		return r
	}
	r.InvoiceNo = p.PayoutInvoiceNo
	r.TransactionStatus = p.TransactionStatus
	if p.PayoutInvoiceNo != "" || p.ExternalInvoiceRef != "" || p.TransactionStatus != "" || !p.Value.IsZero() {
		r.Payout = &p
	}
	return r
}

// GetPayout reads a payout by its payout_invoice_no or its external_invoice_ref. The reference
// is path-escaped. KindNotFound is returned only when the service says so unambiguously.
func (c *Client) GetPayout(ctx context.Context, reference string) (Payout, error) {
	const op = "get payout"
	if reference == "" {
		return Payout{}, &Error{Op: op, Kind: KindRejected, Err: ErrEmptyReference}
	}
	res, err := c.do(ctx, request{op: op, method: http.MethodGet, path: PathPayout + "/" + escapeSegment(reference)})
	if err != nil {
		return Payout{}, err
	}
	bad := func(err error) error {
		return &Error{Op: op, HTTPStatus: res.status, Code: int(res.env.Code.N),
			Status: c.clean(string(res.env.Status)), UUID: c.clean(string(res.env.UUID)),
			Kind: KindRetryable, Err: err}
	}
	t := bytes.TrimSpace(res.env.Data)
	if isNull(t) || t[0] != '{' {
		return Payout{}, bad(fmt.Errorf("%w: %w", ErrBadResponse, errNoData))
	}
	var p Payout
	if err := json.Unmarshal(t, &p); err != nil {
		return Payout{}, bad(fmt.Errorf("%w: payout: %v", ErrBadResponse, err))
	}
	// "Found" is what stops a payout from being sent again, so an answer must show it is about
	// this reference: an empty object, or another payout, is no answer at all.
	switch {
	case p.PayoutInvoiceNo == "" && p.ExternalInvoiceRef == "":
		return Payout{}, bad(fmt.Errorf("%w: payout has neither invoice number nor reference", ErrBadResponse))
	case p.ExternalInvoiceRef != "" && p.ExternalInvoiceRef != reference && p.PayoutInvoiceNo != reference:
		return Payout{}, bad(fmt.Errorf("%w: asked for %q, the answer is about %q", ErrBadResponse, reference, p.ExternalInvoiceRef))
	}
	return p, nil
}

// escapeSegment escapes a reference as one path segment; "." and ".." are escaped too so that no
// proxy resolves them as relative paths.
func escapeSegment(s string) string {
	if s == "." || s == ".." {
		return strings.Repeat("%2E", len(s))
	}
	return url.PathEscape(s)
}
