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
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return req, []string{errContentType}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return req, []string{"body: " + err.Error()}
	}
	if len(body) > maxBodyBytes {
		return req, []string{fmt.Sprintf("body: longer than %d bytes", maxBodyBytes)}
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&raw); err != nil || raw == nil {
		return req, []string{"body: not a JSON object"}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return req, []string{"body: data after the JSON object"}
	}

	var problems []string
	bad := func(field, format string, args ...any) {
		problems = append(problems, field+": "+fmt.Sprintf(format, args...))
	}
	var unknown []string
	for k := range raw {
		if !slices.Contains(createFields, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		bad(k, "unknown field")
	}

	str := func(field string, required bool, limit int) string {
		v, ok := raw[field]
		if !ok || string(v) == "null" {
			if required {
				bad(field, "required")
			}
			return ""
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			bad(field, "must be a string")
			return ""
		}
		switch {
		case required && strings.TrimSpace(s) == "":
			bad(field, "required")
		case len(s) > limit:
			bad(field, "longer than %d bytes", limit)
		}
		return s
	}
	req.VirtualPoolReference = str(fieldPool, true, MaxRefLen)
	req.ExternalInvoiceRef = str(fieldExternalRef, true, MaxRefLen)
	req.RecipientReference = str(fieldRecipientRef, true, MaxTextLen)
	req.PaymentDescription = str(fieldDescription, false, MaxTextLen)
	req.ClientCallbackURL = str(fieldCallbackURL, true, MaxURLLen)
	req.ClientRedirectURL = str(fieldRedirectURL, false, MaxURLLen)
	req.ThirdPartyAccountNo = str(fieldAccount, true, MaxAccountDigits)

	for _, f := range []struct {
		name, value string
	}{{fieldCallbackURL, req.ClientCallbackURL}, {fieldRedirectURL, req.ClientRedirectURL}} {
		if f.value == "" {
			continue
		}
		if u, err := url.Parse(f.value); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad(f.name, "must be an absolute http or https URL")
		}
	}
	if acc := req.ThirdPartyAccountNo; acc != "" {
		if strings.Trim(acc, "0123456789") != "" {
			bad(fieldAccount, "must be digits only")
		} else if len(acc) < MinAccountDigits {
			bad(fieldAccount, "shorter than %d digits", MinAccountDigits)
		}
	}

	if v, ok := raw[fieldServiceID]; !ok || string(v) == "null" {
		bad(fieldServiceID, "required")
	} else if n, ok := jsonNumber(v); !ok {
		bad(fieldServiceID, "must be a JSON integer")
	} else if d, err := decimal.NewFromString(n); err != nil || !d.IsInteger() {
		bad(fieldServiceID, "must be a JSON integer")
	} else if _, known := providers[d.IntPart()]; !known || !d.Equal(decimal.NewFromInt(d.IntPart())) {
		bad(fieldServiceID, "unknown payout provider %s", n)
	} else {
		req.PayoutServiceID = d.IntPart()
	}

	if v, ok := raw[fieldAmount]; !ok || string(v) == "null" {
		bad(fieldAmount, "required")
	} else if n, ok := jsonNumber(v); !ok {
		bad(fieldAmount, "must be a JSON number")
	} else if d, err := decimal.NewFromString(n); err != nil {
		bad(fieldAmount, "must be a JSON number")
	} else {
		switch {
		case !d.IsPositive():
			bad(fieldAmount, "must be greater than 0")
		case !d.Round(2).Equal(d):
			bad(fieldAmount, "more than 2 decimals")
		case d.GreaterThan(maxAmount):
			bad(fieldAmount, "greater than %s", maxAmount.StringFixed(2))
		default:
			req.Amount = d
		}
	}
	return req, problems
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
