package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// The service's payload types are only partly documented, so every field is decoded by one of
// these tolerant types: a number may arrive as a string and the other way round.

var jsonNull = []byte("null")

func isNull(b []byte) bool { return len(b) == 0 || bytes.Equal(bytes.TrimSpace(b), jsonNull) }

// flexString accepts a JSON string, number or bool as text; null as ""; an object or array as
// its compact JSON text.
type flexString string

func (s *flexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case isNull(b):
		*s = ""
	case b[0] == '"':
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = flexString(v)
	case b[0] == '{' || b[0] == '[':
		var buf bytes.Buffer
		if err := json.Compact(&buf, b); err != nil {
			return err
		}
		*s = flexString(buf.String())
	default:
		*s = flexString(b)
	}
	return nil
}

// flexInt accepts a JSON integer or a string holding one; null leaves it unset.
type flexInt struct {
	N   int64
	Set bool
}

// scalarText is a JSON number, or a string holding one, as text; ok is false for null and "".
func scalarText(b []byte) (text string, ok bool, err error) {
	b = bytes.TrimSpace(b)
	if isNull(b) {
		return "", false, nil
	}
	text = string(b)
	if b[0] == '"' {
		if err := json.Unmarshal(b, &text); err != nil {
			return "", false, err
		}
		text = strings.TrimSpace(text)
	}
	return text, text != "", nil
}

func (n *flexInt) UnmarshalJSON(b []byte) error {
	text, ok, err := scalarText(b)
	if err != nil || !ok {
		*n = flexInt{}
		return err
	}
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		// 2000.0 is still 2000.
		d, derr := decimal.NewFromString(text)
		if derr != nil || !d.IsInteger() {
			return fmt.Errorf("not an integer: %q", text)
		}
		v = d.IntPart()
	}
	*n = flexInt{N: v, Set: true}
	return nil
}

// flexDecimal accepts a JSON number or a string holding one ("1250.50", " 1250.5 "); null or
// "" leaves it unset. Exponents are accepted, thousands separators are not.
type flexDecimal struct {
	D   decimal.Decimal
	Set bool
}

func (d *flexDecimal) UnmarshalJSON(b []byte) error {
	text, ok, err := scalarText(b)
	if err != nil || !ok {
		*d = flexDecimal{}
		return err
	}
	v, err := decimal.NewFromString(text)
	if err != nil {
		return fmt.Errorf("not a decimal: %q", text)
	}
	*d = flexDecimal{D: v, Set: true}
	return nil
}

// flexBool accepts true/false, "true"/"false" (any case), 1/0 and "1"/"0".
type flexBool bool

func (f *flexBool) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if isNull(b) {
		*f = false
		return nil
	}
	text := string(b)
	if b[0] == '"' {
		if err := json.Unmarshal(b, &text); err != nil {
			return err
		}
	}
	v, err := strconv.ParseBool(strings.ToLower(strings.TrimSpace(text)))
	if err != nil {
		return fmt.Errorf("not a boolean: %q", text)
	}
	*f = flexBool(v)
	return nil
}

// envelope is the common response envelope.
type envelope struct {
	Status  flexString      `json:"status"`
	Code    flexInt         `json:"code"`
	Data    json.RawMessage `json:"data"`
	UUID    flexString      `json:"uuid"`
	Message flexString      `json:"message"`
	Error   flexString      `json:"error"`
}

// decodeEnvelope decodes body if it is a JSON object; anything else is ErrBadResponse.
func decodeEnvelope(body []byte) (*envelope, error) {
	t := bytes.TrimSpace(body)
	if len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("%w: not a JSON object", ErrBadResponse)
	}
	var env envelope
	if err := json.Unmarshal(t, &env); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadResponse, err)
	}
	return &env, nil
}

// fromService reports whether a JSON object is the service's envelope rather than any JSON:
// it has a code, or a status that is one of the envelope's words. A status that is a number
// (404) is a web framework's, not the envelope's.
func (e *envelope) fromService() bool {
	if e == nil {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(string(e.Status))) {
	case "ok", "success", "fail", "failed", "error":
		return true
	}
	return e.Code.Set
}

type verdict int

const (
	verdictAmbiguous verdict = iota
	verdictOK
	verdictFail
)

// verdict decides whether the envelope reports success. status "ok" or a success code (200,
// 2000) is success; status "fail" is failure; when the two contradict each other, or neither is
// recognisable (a code alone that is not 200/2000), the answer is ambiguous and the caller must
// not guess: an unknown code could be a success code not seen yet.
func (e *envelope) verdict() verdict {
	st := strings.ToLower(strings.TrimSpace(string(e.Status)))
	okStatus := st == "ok" || st == "success"
	failStatus := st == "fail" || st == "failed" || st == "error"
	okCode := e.Code.Set && (e.Code.N == 200 || e.Code.N == 2000)
	switch {
	case failStatus && !okCode:
		return verdictFail
	case failStatus:
		return verdictAmbiguous
	case okStatus || (st == "" && okCode):
		return verdictOK
	default:
		return verdictAmbiguous
	}
}

// payoutWire is Payout as it may arrive: amounts and ids as numbers or strings.
type payoutWire struct {
	Value               flexDecimal `json:"value"`
	Amount              flexDecimal `json:"amount"`
	ExternalInvoiceRef  flexString  `json:"external_invoice_ref"`
	PayoutInvoiceNo     flexString  `json:"payout_invoice_no"`
	InvoiceNo           flexString  `json:"invoice_no"`
	PayoutAccountNumber flexString  `json:"payout_account_number"`
	CreatedAt           flexString  `json:"created_at"`
	TransactionStatus   flexString  `json:"transaction_status"`
}

// UnmarshalJSON decodes a payout tolerantly: value as number or string (amount if value is
// absent), invoice_no if payout_invoice_no is absent, a documented transaction_status in any
// case normalised to upper case and any other status kept exactly as sent.
func (p *Payout) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	var w payoutWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*p = Payout{
		Value:               w.Value.D,
		ExternalInvoiceRef:  string(w.ExternalInvoiceRef),
		PayoutInvoiceNo:     string(w.PayoutInvoiceNo),
		PayoutAccountNumber: string(w.PayoutAccountNumber),
		CreatedAt:           string(w.CreatedAt),
		TransactionStatus:   normalizeStatus(string(w.TransactionStatus)),
	}
	if !w.Value.Set && w.Amount.Set {
		p.Value = w.Amount.D
	}
	if p.PayoutInvoiceNo == "" {
		p.PayoutInvoiceNo = string(w.InvoiceNo)
	}
	return nil
}

func normalizeStatus(s string) string {
	switch u := strings.ToUpper(strings.TrimSpace(s)); u {
	case StatusSuccess, StatusFailed, StatusPending:
		return u
	}
	return s
}

// UnmarshalJSON accepts payout_provider_id as a number or a numeric string.
func (p *Provider) UnmarshalJSON(b []byte) error {
	var w struct {
		ID   flexInt    `json:"payout_provider_id"`
		Name flexString `json:"name"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*p = Provider{ID: w.ID.N, Name: string(w.Name)}
	return nil
}

// MarshalJSON writes amount as a JSON number with exactly two decimals (1250.50), as the sample
// request does. An amount with more than two decimals is refused rather than rounded.
func (r CreatePayoutRequest) MarshalJSON() ([]byte, error) {
	if !r.Amount.Equal(r.Amount.Round(2)) {
		return nil, fmt.Errorf("%w: %s", ErrAmountPrecision, r.Amount.String())
	}
	type wire CreatePayoutRequest // same fields, no methods
	return json.Marshal(struct {
		wire
		Amount json.Number `json:"amount"`
	}{wire: wire(r), Amount: json.Number(r.Amount.StringFixed(2))})
}

var errNoData = errors.New("no data in the envelope")
