package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/shopspring/decimal"
)

// MaxCallbackBytes caps a callback body; VerifyCallback refuses a longer one before parsing.
const MaxCallbackBytes = 64 << 10

// CallbackLeeway is the clock skew allowed when a callback token carries exp or nbf.
const CallbackLeeway = 5 * time.Minute

// DefaultCallbackResponseCode is the wire response_code SignCallback writes when the payload
// has none (2100, as in the service's sample).
const DefaultCallbackResponseCode = 2100

// Reasons VerifyCallback fails. Each is distinct so that a callback receiver can log and count
// them apart.
var (
	// ErrEmptyHashKey: no hash key configured. golang-jwt would verify a token signed with an
	// empty key against an empty key, so an empty key is never used.
	ErrEmptyHashKey = errors.New("empty hash key")
	// ErrCallbackMalformed: the body is not the callback wire form, or data is not a JWT, or
	// the payload is not the callback payload.
	ErrCallbackMalformed = errors.New("malformed callback")
	// ErrCallbackSignature: the HMAC does not match. A wrong hash key and a tampered token give
	// the same answer: an HMAC only says "matches" or "does not".
	ErrCallbackSignature = errors.New("callback signature invalid")
	// ErrCallbackAlgorithm: the token's alg is not HS256, HS384 or HS512 ("none", RS256, ES256,
	// PS256 ... are refused before any verification).
	ErrCallbackAlgorithm = errors.New("callback signing algorithm refused")
	// ErrCallbackExpired: the token carries exp (or nbf) and is outside it, beyond
	// CallbackLeeway.
	ErrCallbackExpired = errors.New("callback token expired or not yet valid")
)

var callbackMethods = []string{"HS256", "HS384", "HS512"}

// CheckHashKey reports whether key can verify callbacks; call it at start-up.
func CheckHashKey(key []byte) error {
	if len(bytes.TrimSpace(key)) == 0 {
		return ErrEmptyHashKey
	}
	return nil
}

// Callback is a verified callback.
type Callback struct {
	ResponseCode int             // the wire form's response_code (2100 in the sample)
	Payload      CallbackPayload // the decoded payload
	RawPayload   json.RawMessage // the payload's JSON as signed
	// SignedSHA256 is the SHA-256 (hex) of what the token's signature covers, its header and
	// claims segments as sent: the same callback whatever envelope carries it (spaces, other
	// fields) and however its signature segment is encoded, so a replay re-wrapped is known as
	// one. Only the hash key's holder can make another.
	SignedSHA256 string
}

// CallbackPayload is the content of the callback JWT. Amounts are decimals whether they arrive
// as text (as documented) or as numbers.
type CallbackPayload struct {
	InvoiceNo               string
	ErrorDescription        []json.RawMessage // element type not documented
	InvoiceStatusID         int64
	InvoiceStatus           string // "SUCCESS" with InvoiceStatusID 2 in the sample
	Amount                  decimal.Decimal
	PaymentSwitchChargeRate decimal.Decimal
	PayoutServiceID         int64
	ResponseCode            int
	BankResponseSuccess     bool
	OrgnFromAccountCurrency string
	OrgnThirdPartyAccountNo string
	OrgnPaymentDescription  string
	BizMsgID                string
	DisplayName             string
	BankReferenceNo         string
	OrgnTransactionAmount   string
	FromAccountNo           string
}

type callbackPayloadWire struct {
	InvoiceNo               flexString      `json:"invoice_no"`
	ErrorDescription        json.RawMessage `json:"error_description"`
	InvoiceStatusID         flexInt         `json:"invoice_status_id"`
	InvoiceStatus           flexString      `json:"invoice_status"`
	Amount                  flexDecimal     `json:"amount"`
	PaymentSwitchChargeRate flexDecimal     `json:"payment_switch_charge_rate"`
	PayoutServiceID         flexInt         `json:"payout_service_id"`
	ResponseCode            flexInt         `json:"response_code"`
	BankResponseSuccess     flexBool        `json:"bank_response_success"`
	OrgnFromAccountCurrency flexString      `json:"orgn_from_account_currency"`
	OrgnThirdPartyAccountNo flexString      `json:"orgn_third_party_account_no"`
	OrgnPaymentDescription  flexString      `json:"orgn_payment_description"`
	BizMsgID                flexString      `json:"biz_msg_id"`
	DisplayName             flexString      `json:"display_name"`
	BankReferenceNo         flexString      `json:"bank_reference_no"`
	OrgnTransactionAmount   flexString      `json:"orgn_transaction_amount"`
	FromAccountNo           flexString      `json:"from_account_no"`
}

// UnmarshalJSON decodes the payload tolerantly (numbers as strings and the other way round; an
// error_description that is not an array becomes a one-element array).
func (p *CallbackPayload) UnmarshalJSON(b []byte) error {
	var w callbackPayloadWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*p = CallbackPayload{
		InvoiceNo:               string(w.InvoiceNo),
		InvoiceStatusID:         w.InvoiceStatusID.N,
		InvoiceStatus:           string(w.InvoiceStatus),
		Amount:                  w.Amount.D,
		PaymentSwitchChargeRate: w.PaymentSwitchChargeRate.D,
		PayoutServiceID:         w.PayoutServiceID.N,
		ResponseCode:            int(w.ResponseCode.N),
		BankResponseSuccess:     bool(w.BankResponseSuccess),
		OrgnFromAccountCurrency: string(w.OrgnFromAccountCurrency),
		OrgnThirdPartyAccountNo: string(w.OrgnThirdPartyAccountNo),
		OrgnPaymentDescription:  string(w.OrgnPaymentDescription),
		BizMsgID:                string(w.BizMsgID),
		DisplayName:             string(w.DisplayName),
		BankReferenceNo:         string(w.BankReferenceNo),
		OrgnTransactionAmount:   string(w.OrgnTransactionAmount),
		FromAccountNo:           string(w.FromAccountNo),
	}
	if ed := bytes.TrimSpace(w.ErrorDescription); !isNull(ed) {
		if ed[0] == '[' {
			if err := json.Unmarshal(ed, &p.ErrorDescription); err != nil {
				return err
			}
		} else {
			p.ErrorDescription = []json.RawMessage{append(json.RawMessage(nil), ed...)}
		}
	}
	return nil
}

// MarshalJSON writes the payload as the service documents it: amounts as decimal text.
func (p CallbackPayload) MarshalJSON() ([]byte, error) {
	ed := p.ErrorDescription
	if ed == nil {
		ed = []json.RawMessage{}
	}
	return json.Marshal(struct {
		InvoiceNo               string            `json:"invoice_no"`
		ErrorDescription        []json.RawMessage `json:"error_description"`
		InvoiceStatusID         int64             `json:"invoice_status_id"`
		InvoiceStatus           string            `json:"invoice_status"`
		Amount                  string            `json:"amount"`
		PaymentSwitchChargeRate string            `json:"payment_switch_charge_rate"`
		PayoutServiceID         int64             `json:"payout_service_id"`
		ResponseCode            int               `json:"response_code"`
		BankResponseSuccess     bool              `json:"bank_response_success"`
		OrgnFromAccountCurrency string            `json:"orgn_from_account_currency"`
		OrgnThirdPartyAccountNo string            `json:"orgn_third_party_account_no"`
		OrgnPaymentDescription  string            `json:"orgn_payment_description"`
		BizMsgID                string            `json:"biz_msg_id"`
		DisplayName             string            `json:"display_name"`
		BankReferenceNo         string            `json:"bank_reference_no"`
		OrgnTransactionAmount   string            `json:"orgn_transaction_amount"`
		FromAccountNo           string            `json:"from_account_no"`
	}{
		p.InvoiceNo, ed, p.InvoiceStatusID, p.InvoiceStatus, moneyText(p.Amount),
		moneyText(p.PaymentSwitchChargeRate), p.PayoutServiceID, p.ResponseCode,
		p.BankResponseSuccess, p.OrgnFromAccountCurrency, p.OrgnThirdPartyAccountNo,
		p.OrgnPaymentDescription, p.BizMsgID, p.DisplayName, p.BankReferenceNo,
		p.OrgnTransactionAmount, p.FromAccountNo,
	})
}

// moneyText writes two decimals unless the value has more (a charge rate may).
func moneyText(d decimal.Decimal) string {
	if d.Exponent() >= -2 {
		return d.StringFixed(2)
	}
	return d.String()
}

type callbackWire struct {
	Data         *string `json:"data"`
	ResponseCode flexInt `json:"response_code"`
}

// VerifyCallback parses a callback body {data: JWT, response_code: number}, verifies the JWT
// with hashKey (HS256, HS384 or HS512 only) and returns the payload. The payload's fields may be
// the JWT's claims themselves or an object (or JSON text) under the claim "data" or "payload".
// exp and nbf are not required; if present they are enforced with CallbackLeeway.
//
// Errors wrap ErrEmptyHashKey, ErrCallbackMalformed, ErrCallbackAlgorithm, ErrCallbackSignature
// or ErrCallbackExpired. They never contain the key.
func VerifyCallback(body []byte, hashKey []byte) (Callback, error) {
	if err := CheckHashKey(hashKey); err != nil {
		return Callback{}, fmt.Errorf("verify callback: %w", err)
	}
	if len(body) > MaxCallbackBytes {
		return Callback{}, fmt.Errorf("verify callback: %w: body of %d bytes exceeds %d", ErrCallbackMalformed, len(body), MaxCallbackBytes)
	}
	var w callbackWire
	if err := json.Unmarshal(body, &w); err != nil {
		return Callback{}, fmt.Errorf("verify callback: %w: %v", ErrCallbackMalformed, err)
	}
	if w.Data == nil || strings.TrimSpace(*w.Data) == "" {
		return Callback{}, fmt.Errorf("verify callback: %w: no data", ErrCallbackMalformed)
	}
	token := strings.TrimSpace(*w.Data)
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return Callback{}, fmt.Errorf("verify callback: %w: data is not a JWT", ErrCallbackMalformed)
	}
	// The algorithm is checked first, from the header itself: golang-jwt reports a method
	// outside WithValidMethods as a signature error, which would hide an attack as noise.
	var header struct {
		Alg string `json:"alg"`
	}
	hb, err := decodeSegment(parts[0])
	if err != nil || json.Unmarshal(hb, &header) != nil {
		return Callback{}, fmt.Errorf("verify callback: %w: bad JWT header", ErrCallbackMalformed)
	}
	if !isHMAC(header.Alg) {
		return Callback{}, fmt.Errorf("verify callback: %w: %q", ErrCallbackAlgorithm, header.Alg)
	}

	parser := jwt.NewParser(
		jwt.WithValidMethods(callbackMethods),
		jwt.WithLeeway(CallbackLeeway),
		jwt.WithJSONNumber(),
		jwt.WithPaddingAllowed(),
	)
	_, err = parser.Parse(token, func(t *jwt.Token) (any, error) {
		if _, ok := t.Method.(*jwt.SigningMethodHMAC); !ok {
			return nil, ErrCallbackAlgorithm
		}
		return hashKey, nil
	})
	switch {
	case err == nil:
	case errors.Is(err, ErrCallbackAlgorithm):
		return Callback{}, fmt.Errorf("verify callback: %w", ErrCallbackAlgorithm)
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return Callback{}, fmt.Errorf("verify callback: %w", ErrCallbackSignature)
	case errors.Is(err, jwt.ErrTokenExpired), errors.Is(err, jwt.ErrTokenNotValidYet):
		return Callback{}, fmt.Errorf("verify callback: %w: %w", ErrCallbackExpired, err)
	default:
		return Callback{}, fmt.Errorf("verify callback: %w: %w", ErrCallbackMalformed, err)
	}

	claims, err := decodeSegment(parts[1])
	if err != nil {
		return Callback{}, fmt.Errorf("verify callback: %w: bad JWT payload", ErrCallbackMalformed)
	}
	raw, err := payloadOf(claims)
	if err != nil {
		return Callback{}, fmt.Errorf("verify callback: %w: %w", ErrCallbackMalformed, err)
	}
	var p CallbackPayload
	if err := json.Unmarshal(raw, &p); err != nil {
		return Callback{}, fmt.Errorf("verify callback: %w: payload: %v", ErrCallbackMalformed, err)
	}
	if p.InvoiceNo == "" {
		return Callback{}, fmt.Errorf("verify callback: %w: payload has no invoice_no", ErrCallbackMalformed)
	}
	signed := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	return Callback{ResponseCode: int(w.ResponseCode.N), Payload: p, RawPayload: raw, SignedSHA256: hex.EncodeToString(signed[:])}, nil
}

func isHMAC(alg string) bool {
	for _, m := range callbackMethods {
		if alg == m {
			return true
		}
	}
	return false
}

func decodeSegment(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

// payloadOf returns the claims holding the payload fields: the claims themselves when they have
// invoice_no, else an object (or JSON text of one) under "data" or "payload".
func payloadOf(claims []byte) (json.RawMessage, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(claims, &top); err != nil {
		return nil, fmt.Errorf("claims: %v", err)
	}
	if _, ok := top["invoice_no"]; ok {
		return claims, nil
	}
	for _, k := range []string{"data", "payload"} {
		v := bytes.TrimSpace(top[k])
		if len(v) == 0 {
			continue
		}
		if v[0] == '{' {
			return json.RawMessage(v), nil
		}
		if v[0] == '"' {
			var s string
			if json.Unmarshal(v, &s) == nil {
				if t := bytes.TrimSpace([]byte(s)); len(t) > 0 && t[0] == '{' && json.Valid(t) {
					return json.RawMessage(t), nil
				}
			}
		}
	}
	return claims, nil
}

// SignCallback builds the wire form of a callback carrying p, signed with HS256, as the service
// would send it: {"data": JWT, "response_code": p.ResponseCode (DefaultCallbackResponseCode if
// zero)}. The payload fields are the JWT's claims.
func SignCallback(p CallbackPayload, hashKey []byte) ([]byte, error) {
	if err := CheckHashKey(hashKey); err != nil {
		return nil, fmt.Errorf("sign callback: %w", err)
	}
	pb, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("sign callback: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(pb))
	dec.UseNumber()
	var claims jwt.MapClaims
	if err := dec.Decode(&claims); err != nil {
		return nil, fmt.Errorf("sign callback: %w", err)
	}
	token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(hashKey)
	if err != nil {
		return nil, fmt.Errorf("sign callback: %w", err)
	}
	code := p.ResponseCode
	if code == 0 {
		code = DefaultCallbackResponseCode
	}
	return json.Marshal(struct {
		Data         string `json:"data"`
		ResponseCode int    `json:"response_code"`
	}{token, code})
}
