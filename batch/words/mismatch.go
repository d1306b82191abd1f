package words

// Mismatch texts of a reconciliation row's mismatches (report.ReconRow) that `payout reconcile` uses; other texts are shown as
// given.
const (
	MismatchAmount       = "amount differs"
	MismatchAccount      = "account differs"
	MismatchFinalChanged = "final state changed"
	MismatchUnknown      = "unknown to the service"
)

// Values of a reconciliation row's name check: how the name the bank holds for the account compares with the
// recipient. Empty: not compared.
const (
	NameMatch    = "match"
	NameMismatch = "mismatch"
)
