// Package callbacks receives the service's signed callbacks and records them in the ledger: a
// Handler verifies each callback's JWT with the hash key, moves the payout it names to
// SUCCEEDED, and stores every verified callback with its verdict. A callback that disagrees with
// the ledger (another amount, a payout the ledger says FAILED, a second bank reference) is stored
// and flagged, never applied, and changes nothing of the payout. The display_name of a callback
// that matches its payout, read as the name the bank holds for the account, is kept with its
// verdict against the recipient (NamesMatch): a mismatch is flagged, never a reason to change
// the payout's state. A callback that comes before the run has recorded the invoice number it
// names, while a payout without one pays its account and amount, is stored and answered 503, so
// that its next delivery is applied. The `callbacks` command and the demo serve it over HTTP.
package callbacks
