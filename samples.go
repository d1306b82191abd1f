// Package payout holds what the command embeds from the repository's root: the sample file that
// `payout demo` pays. The code lives in cmd/payout, api, batch, ledger and templates.
package payout

import _ "embed"

// SamplePayrollCSV is testdata/sample-payroll.csv: 50 payouts to Malaysian banks and e-wallets.
//
//go:embed testdata/sample-payroll.csv
var SamplePayrollCSV []byte

// SamplePayrollName is the sample's file name, used for its reports.
const SamplePayrollName = "sample-payroll.csv"
