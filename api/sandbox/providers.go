package sandbox

import "github.com/payout/payout/api"

// DefaultProviders returns the sandbox's provider list: Malaysian banks and e-wallets. The ids are
// stable across versions so that files and tests may name a provider by id. A bank's name starts
// with the name people use for it, so that "Maybank" or "Public Bank" is a prefix of the listed name.
func DefaultProviders() []api.Provider {
	return []api.Provider{
		{ID: 1, Name: "Maybank (Malayan Banking Berhad)"},
		{ID: 2, Name: "CIMB Bank Berhad"},
		{ID: 3, Name: "Public Bank Berhad"},
		{ID: 4, Name: "RHB Bank Berhad"},
		{ID: 5, Name: "Hong Leong Bank Berhad"},
		{ID: 6, Name: "AmBank (M) Berhad"},
		{ID: 7, Name: "Bank Islam Malaysia Berhad"},
		{ID: 8, Name: "Bank Rakyat (Bank Kerjasama Rakyat Malaysia Berhad)"},
		{ID: 9, Name: "BSN (Bank Simpanan Nasional)"},
		{ID: 10, Name: "Affin Bank Berhad"},
		{ID: 11, Name: "Alliance Bank Malaysia Berhad"},
		{ID: 12, Name: "OCBC Bank (Malaysia) Berhad"},
		{ID: 13, Name: "HSBC Bank Malaysia Berhad"},
		{ID: 14, Name: "Standard Chartered Bank Malaysia Berhad"},
		{ID: 15, Name: "UOB Malaysia (United Overseas Bank (Malaysia) Bhd)"},
		{ID: 16, Name: "Agrobank (Bank Pertanian Malaysia Berhad)"},
		{ID: 17, Name: "Bank Muamalat Malaysia Berhad"},
		{ID: 18, Name: "MBSB Bank Berhad"},
		{ID: 19, Name: "Citibank Berhad"},
		{ID: 20, Name: "Al Rajhi Bank Malaysia"},
		{ID: 51, Name: "Touch 'n Go eWallet"},
		{ID: 52, Name: "Boost"},
		{ID: 53, Name: "GrabPay"},
		{ID: 54, Name: "ShopeePay"},
		{ID: 55, Name: "BigPay"},
	}
}
