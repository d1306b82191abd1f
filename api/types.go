package api

import (
	"github.com/shopspring/decimal"
)

// Transaction statuses documented by the service. Others may arrive (a pending-approval status,
// say); they are kept as text and treated as not final.
const (
	StatusSuccess = "SUCCESS"
	StatusFailed  = "FAILED"
	StatusPending = "PENDING"
)

// Provider is a bank or e-wallet that accepts payouts.
type Provider struct {
	ID   int64  `json:"payout_provider_id"`
	Name string `json:"name"`
}

// CreatePayoutRequest is the body of Create Payout. Amount is sent as a JSON number with
// exactly two decimals.
type CreatePayoutRequest struct {
	VirtualPoolReference string          `json:"virtual_pool_reference"`
	PayoutServiceID      int64           `json:"payout_service_id"`
	Amount               decimal.Decimal `json:"amount"`
	ClientRedirectURL    string          `json:"client_redirect_url"`
	ClientCallbackURL    string          `json:"client_callback_url"`
	ThirdPartyAccountNo  string          `json:"third_party_account_no"`
	RecipientReference   string          `json:"recipient_reference"`
	PaymentDescription   string          `json:"payment_description"`
	ExternalInvoiceRef   string          `json:"external_invoice_ref"`
}

// Payout is a payout as Get Payout returns it.
type Payout struct {
	Value               decimal.Decimal `json:"value"`
	ExternalInvoiceRef  string          `json:"external_invoice_ref"`
	PayoutInvoiceNo     string          `json:"payout_invoice_no"`
	PayoutAccountNumber string          `json:"payout_account_number"`
	CreatedAt           string          `json:"created_at"`
	TransactionStatus   string          `json:"transaction_status"`
}

// Final reports whether the status is one the service documents as final.
func (p Payout) Final() bool {
	return p.TransactionStatus == StatusSuccess || p.TransactionStatus == StatusFailed
}
