package api_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/payout/payout/api"
	"github.com/shopspring/decimal"
)

var hashKey = []byte("merchant-hash-key-0123456789")

func samplePayload() api.CallbackPayload {
	return api.CallbackPayload{
		InvoiceNo:               "INV-0001",
		ErrorDescription:        []json.RawMessage{},
		InvoiceStatusID:         2,
		InvoiceStatus:           "SUCCESS",
		Amount:                  decimal.RequireFromString("1250.50"),
		PaymentSwitchChargeRate: decimal.RequireFromString("0.125"),
		PayoutServiceID:         12,
		ResponseCode:            2100,
		BankResponseSuccess:     true,
		OrgnFromAccountCurrency: "MYR",
		OrgnThirdPartyAccountNo: "0012345678",
		OrgnPaymentDescription:  "Salary",
		BizMsgID:                "BIZ1",
		DisplayName:             "Siti",
		BankReferenceNo:         "BR1",
		OrgnTransactionAmount:   "1250.50",
		FromAccountNo:           "VP-1",
	}
}

// wire wraps a token in the callback wire form.
func wire(tb testing.TB, token string) []byte {
	tb.Helper()
	b, err := json.Marshal(map[string]any{"data": token, "response_code": 2100})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func claimsOf(tb testing.TB, p api.CallbackPayload) jwt.MapClaims {
	tb.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		tb.Fatal(err)
	}
	var m jwt.MapClaims
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatal(err)
	}
	return m
}

func signWith(tb testing.TB, m jwt.SigningMethod, claims jwt.Claims, key any) string {
	tb.Helper()
	s, err := jwt.NewWithClaims(m, claims).SignedString(key)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// handMade builds an HS256 JWT without golang-jwt, as another library would.
func handMade(header, payload string, key []byte) string {
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString([]byte(payload))
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(signing))
	return signing + "." + enc.EncodeToString(mac.Sum(nil))
}

func TestSignAndVerifyCallback(t *testing.T) {
	t.Parallel()
	want := samplePayload()
	body, err := api.SignCallback(want, hashKey)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(body), "INV-0001") {
		t.Fatalf("callback carries the payload in plain text: %s", body)
	}
	cb, err := api.VerifyCallback(body, hashKey)
	if err != nil {
		t.Fatal(err)
	}
	if cb.ResponseCode != 2100 {
		t.Errorf("response code = %d", cb.ResponseCode)
	}
	got := cb.Payload
	if !got.Amount.Equal(want.Amount) || !got.PaymentSwitchChargeRate.Equal(want.PaymentSwitchChargeRate) {
		t.Errorf("amounts = %s, %s", got.Amount, got.PaymentSwitchChargeRate)
	}
	if got.InvoiceNo != want.InvoiceNo || got.InvoiceStatusID != 2 || got.InvoiceStatus != "SUCCESS" ||
		got.PayoutServiceID != 12 || got.ResponseCode != 2100 || !got.BankResponseSuccess ||
		got.OrgnThirdPartyAccountNo != "0012345678" || got.FromAccountNo != "VP-1" ||
		got.OrgnTransactionAmount != "1250.50" || got.DisplayName != "Siti" || len(got.ErrorDescription) != 0 {
		t.Errorf("payload = %+v", got)
	}
	var raw map[string]any
	if err := json.Unmarshal(cb.RawPayload, &raw); err != nil || raw["amount"] != "1250.50" {
		t.Errorf("raw payload %s: amount not decimal text (%v)", cb.RawPayload, err)
	}
}

func TestVerifyCallbackAccepts(t *testing.T) {
	t.Parallel()
	claims := claimsOf(t, samplePayload())
	tests := []struct {
		name  string
		token func(tb testing.TB) string
	}{
		{"HS256", func(tb testing.TB) string { return signWith(tb, jwt.SigningMethodHS256, claims, hashKey) }},
		{"HS384", func(tb testing.TB) string { return signWith(tb, jwt.SigningMethodHS384, claims, hashKey) }},
		{"HS512", func(tb testing.TB) string { return signWith(tb, jwt.SigningMethodHS512, claims, hashKey) }},
		{"payload under data claim", func(tb testing.TB) string {
			return signWith(tb, jwt.SigningMethodHS256, jwt.MapClaims{"data": map[string]any(claims), "iat": time.Now().Unix()}, hashKey)
		}},
		{"payload as JSON text under data claim", func(tb testing.TB) string {
			b, _ := json.Marshal(claims)
			return signWith(tb, jwt.SigningMethodHS256, jwt.MapClaims{"data": string(b)}, hashKey)
		}},
		{"exp in the future", func(tb testing.TB) string {
			c := jwt.MapClaims{"exp": time.Now().Add(time.Hour).Unix()}
			for k, v := range claims {
				c[k] = v
			}
			return signWith(tb, jwt.SigningMethodHS256, c, hashKey)
		}},
		{"hand made, numbers for amounts", func(tb testing.TB) string {
			return handMade(`{"typ":"JWT","alg":"HS256"}`,
				`{"invoice_no":"INV-0001","error_description":[],"invoice_status_id":"2","invoice_status":"SUCCESS","amount":1250.50,"payment_switch_charge_rate":0.125,"payout_service_id":12,"response_code":2100,"bank_response_success":"true","orgn_third_party_account_no":"0012345678","unknown":1}`,
				hashKey)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cb, err := api.VerifyCallback(wire(t, tt.token(t)), hashKey)
			if err != nil {
				t.Fatal(err)
			}
			p := cb.Payload
			if p.InvoiceNo != "INV-0001" || !p.Amount.Equal(decimal.RequireFromString("1250.5")) ||
				!p.PaymentSwitchChargeRate.Equal(decimal.RequireFromString("0.125")) ||
				p.InvoiceStatusID != 2 || !p.BankResponseSuccess || p.OrgnThirdPartyAccountNo != "0012345678" {
				t.Fatalf("payload = %+v", p)
			}
		})
	}
}

func TestVerifyCallbackRefuses(t *testing.T) {
	t.Parallel()
	claims := claimsOf(t, samplePayload())
	good := signWith(t, jwt.SigningMethodHS256, claims, hashKey)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tampered := func() string {
		parts := strings.Split(good, ".")
		c := jwt.MapClaims{}
		for k, v := range claims {
			c[k] = v
		}
		c["amount"] = "9999.00"
		b, _ := json.Marshal(c)
		parts[1] = base64.RawURLEncoding.EncodeToString(b)
		return strings.Join(parts, ".")
	}()
	expired := jwt.MapClaims{"exp": time.Now().Add(-time.Hour).Unix()}
	for k, v := range claims {
		expired[k] = v
	}
	noneToken := signWith(t, jwt.SigningMethodNone, claims, jwt.UnsafeAllowNoneSignatureType)

	tests := []struct {
		name string
		body []byte
		key  []byte
		want error
	}{
		{"wrong key", wire(t, good), []byte("another-key"), api.ErrCallbackSignature},
		{"tampered payload", wire(t, tampered), hashKey, api.ErrCallbackSignature},
		{"signature stripped", wire(t, good[:strings.LastIndex(good, ".")+1]), hashKey, api.ErrCallbackSignature},
		{"alg none", wire(t, noneToken), hashKey, api.ErrCallbackAlgorithm},
		{"alg none hand made", wire(t, handMade(`{"alg":"none"}`, `{"invoice_no":"I"}`, hashKey)), hashKey, api.ErrCallbackAlgorithm},
		{"RS256", wire(t, signWith(t, jwt.SigningMethodRS256, claims, rsaKey)), hashKey, api.ErrCallbackAlgorithm},
		{"ES256", wire(t, signWith(t, jwt.SigningMethodES256, claims, ecKey)), hashKey, api.ErrCallbackAlgorithm},
		{"expired", wire(t, signWith(t, jwt.SigningMethodHS256, expired, hashKey)), hashKey, api.ErrCallbackExpired},
		{"not JSON", []byte("data=abc"), hashKey, api.ErrCallbackMalformed},
		{"empty body", nil, hashKey, api.ErrCallbackMalformed},
		{"no data", []byte(`{"response_code":2100}`), hashKey, api.ErrCallbackMalformed},
		{"data not a string", []byte(`{"data":{"invoice_no":"I"},"response_code":2100}`), hashKey, api.ErrCallbackMalformed},
		{"data not a JWT", []byte(`{"data":"hello","response_code":2100}`), hashKey, api.ErrCallbackMalformed},
		{"header not base64", []byte(`{"data":"!!.e30.sig"}`), hashKey, api.ErrCallbackMalformed},
		{"payload without invoice_no", wire(t, signWith(t, jwt.SigningMethodHS256, jwt.MapClaims{"a": 1}, hashKey)), hashKey, api.ErrCallbackMalformed},
		{"payload with bad amount", wire(t, handMade(`{"alg":"HS256"}`, `{"invoice_no":"I","amount":"lots"}`, hashKey)), hashKey, api.ErrCallbackMalformed},
		{"body too large", []byte(`{"data":"` + strings.Repeat("a", api.MaxCallbackBytes) + `"}`), hashKey, api.ErrCallbackMalformed},
		{"empty key", wire(t, good), nil, api.ErrEmptyHashKey},
		{"blank key", wire(t, good), []byte(" \n"), api.ErrEmptyHashKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := api.VerifyCallback(tt.body, tt.key)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			for _, other := range []error{api.ErrCallbackMalformed, api.ErrCallbackSignature, api.ErrCallbackAlgorithm, api.ErrCallbackExpired, api.ErrEmptyHashKey} {
				if other != tt.want && errors.Is(err, other) {
					t.Fatalf("err = %v is also %v", err, other)
				}
			}
			if len(tt.key) > 0 && strings.Contains(err.Error(), string(tt.key)) {
				t.Fatalf("error contains the key: %v", err)
			}
		})
	}
}

func TestEmptyHashKey(t *testing.T) {
	t.Parallel()
	if err := api.CheckHashKey(nil); !errors.Is(err, api.ErrEmptyHashKey) {
		t.Fatalf("CheckHashKey(nil) = %v", err)
	}
	if err := api.CheckHashKey(hashKey); err != nil {
		t.Fatalf("CheckHashKey(key) = %v", err)
	}
	if _, err := api.SignCallback(samplePayload(), nil); !errors.Is(err, api.ErrEmptyHashKey) {
		t.Fatalf("SignCallback with empty key = %v", err)
	}
	// golang-jwt itself accepts a token signed with an empty key; VerifyCallback must not.
	emptySigned := signWith(t, jwt.SigningMethodHS256, claimsOf(t, samplePayload()), []byte{})
	if _, err := api.VerifyCallback(wire(t, emptySigned), []byte{}); !errors.Is(err, api.ErrEmptyHashKey) {
		t.Fatalf("VerifyCallback with empty key = %v", err)
	}
}
