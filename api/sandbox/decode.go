package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/api"
)

// Field limits the sandbox enforces on a create (the service documents none).
const (
	MaxRefLen         = 100
	MaxTextLen        = 255
	MaxURLLen         = 2048
	MinAccountDigits  = 5
	MaxAccountDigits  = 34
	errContentType    = "Content-Type must be application/json"
	fieldAmount       = "amount"
	fieldServiceID    = "payout_service_id"
	fieldAccount      = "third_party_account_no"
	fieldCallbackURL  = "client_callback_url"
	fieldRedirectURL  = "client_redirect_url"
	fieldDescription  = "payment_description"
	fieldExternalRef  = "external_invoice_ref"
	fieldRecipientRef = "recipient_reference"
	fieldPool         = "virtual_pool_reference"
)

var createFields = []string{fieldPool, fieldServiceID, fieldAmount, fieldRedirectURL, fieldCallbackURL,
	fieldAccount, fieldRecipientRef, fieldDescription, fieldExternalRef}

// decodeCreate reads and strictly validates a create body. It returns every problem found, each
// naming its field; the first is errContentType when the content type is wrong.
func decodeCreate(r *http.Request, providers map[int64]api.Provider, maxAmount decimal.Decimal) (api.CreatePayoutRequest, []string) {
	var req api.CreatePayoutRequest
	raw, problem := readCreateBody(r)
	if problem != "" {
		return req, []string{problem}
	}
	d := &createDecoder{raw: raw}
	d.unknownFields()
	req.VirtualPoolReference = d.str(fieldPool, true, MaxRefLen)
	req.ExternalInvoiceRef = d.str(fieldExternalRef, true, MaxRefLen)
	req.RecipientReference = d.str(fieldRecipientRef, true, MaxTextLen)
	req.PaymentDescription = d.str(fieldDescription, false, MaxTextLen)
	req.ClientCallbackURL = d.str(fieldCallbackURL, true, MaxURLLen)
	req.ClientRedirectURL = d.str(fieldRedirectURL, false, MaxURLLen)
	req.ThirdPartyAccountNo = d.str(fieldAccount, true, MaxAccountDigits)
	d.checkURL(fieldCallbackURL, req.ClientCallbackURL)
	d.checkURL(fieldRedirectURL, req.ClientRedirectURL)
	d.checkAccount(req.ThirdPartyAccountNo)
	req.PayoutServiceID = d.serviceID(providers)
	req.Amount = d.amount(maxAmount)
	return req, d.problems
}

// readCreateBody reads the body as one JSON object of at most maxBodyBytes; a body that is not
// one is a single problem, since its fields cannot be judged.
func readCreateBody(r *http.Request) (map[string]json.RawMessage, string) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, errContentType
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, "body: " + err.Error()
	}
	if len(body) > maxBodyBytes {
		return nil, fmt.Sprintf("body: longer than %d bytes", maxBodyBytes)
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&raw); err != nil || raw == nil {
		return nil, "body: not a JSON object"
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, "body: data after the JSON object"
	}
	return raw, ""
}

// createDecoder judges the fields of a create body, collecting every problem rather than
// stopping at the first, so one answer names them all.
type createDecoder struct {
	raw      map[string]json.RawMessage
	problems []string
}

func (d *createDecoder) bad(field, format string, args ...any) {
	d.problems = append(d.problems, field+": "+fmt.Sprintf(format, args...))
}

// unknownFields names, sorted, every field the create does not take.
func (d *createDecoder) unknownFields() {
	var unknown []string
	for k := range d.raw {
		if !slices.Contains(createFields, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		d.bad(k, "unknown field")
	}
}

// str reads a string field of at most limit bytes; a required one must not be blank.
func (d *createDecoder) str(field string, required bool, limit int) string {
	v, ok := d.raw[field]
	if !ok || string(v) == "null" {
		if required {
			d.bad(field, "required")
		}
		return ""
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		d.bad(field, "must be a string")
		return ""
	}
	switch {
	case required && strings.TrimSpace(s) == "":
		d.bad(field, "required")
	case len(s) > limit:
		d.bad(field, "longer than %d bytes", limit)
	}
	return s
}

// checkURL accepts an empty value (a missing required one is already reported) or an absolute
// http or https URL.
func (d *createDecoder) checkURL(field, value string) {
	if value == "" {
		return
	}
	if u, err := url.Parse(value); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		d.bad(field, "must be an absolute http or https URL")
	}
}

func (d *createDecoder) checkAccount(acc string) {
	if acc == "" {
		return
	}
	if strings.Trim(acc, "0123456789") != "" {
		d.bad(fieldAccount, "must be digits only")
	} else if len(acc) < MinAccountDigits {
		d.bad(fieldAccount, "shorter than %d digits", MinAccountDigits)
	}
}

// serviceID reads payout_service_id, a JSON integer naming a known provider.
func (d *createDecoder) serviceID(providers map[int64]api.Provider) int64 {
	v, ok := d.raw[fieldServiceID]
	if !ok || string(v) == "null" {
		d.bad(fieldServiceID, "required")
		return 0
	}
	n, ok := jsonNumber(v)
	if !ok {
		d.bad(fieldServiceID, "must be a JSON integer")
		return 0
	}
	id, err := decimal.NewFromString(n)
	if err != nil || !id.IsInteger() {
		d.bad(fieldServiceID, "must be a JSON integer")
		return 0
	}
	if _, known := providers[id.IntPart()]; !known || !id.Equal(decimal.NewFromInt(id.IntPart())) {
		d.bad(fieldServiceID, "unknown payout provider %s", n)
		return 0
	}
	return id.IntPart()
}

// amount reads the amount, a positive JSON number of at most 2 decimals, not above maxAmount.
func (d *createDecoder) amount(maxAmount decimal.Decimal) decimal.Decimal {
	v, ok := d.raw[fieldAmount]
	if !ok || string(v) == "null" {
		d.bad(fieldAmount, "required")
		return decimal.Decimal{}
	}
	n, ok := jsonNumber(v)
	if !ok {
		d.bad(fieldAmount, "must be a JSON number")
		return decimal.Decimal{}
	}
	a, err := decimal.NewFromString(n)
	switch {
	case err != nil:
		d.bad(fieldAmount, "must be a JSON number")
	case !a.IsPositive():
		d.bad(fieldAmount, "must be greater than 0")
	case !a.Round(2).Equal(a):
		d.bad(fieldAmount, "more than 2 decimals")
	case a.GreaterThan(maxAmount):
		d.bad(fieldAmount, "greater than %s", maxAmount.StringFixed(2))
	default:
		return a
	}
	return decimal.Decimal{}
}

// jsonNumber returns v's text if v is a JSON number (not a string, bool or object).
func jsonNumber(v json.RawMessage) (string, bool) {
	var n json.Number
	t := bytes.TrimSpace(v)
	if len(t) == 0 || t[0] == '"' {
		return "", false
	}
	if err := json.Unmarshal(t, &n); err != nil {
		return "", false
	}
	return n.String(), true
}
