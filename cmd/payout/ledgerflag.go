package main

import "flag"

// ledgerFlagUsage is the help of --ledger, the same for every command that opens a ledger; init,
// which creates one, says so in a help of its own.
const ledgerFlagUsage = "ledger file (default $" + envLedger + " or " + defaultLedger + ")"

// addLedgerFlag registers --ledger on fs, stored in p: the ledger a command opens, empty for
// $PAYOUT_LEDGER or the default file (see ledgerPath).
func addLedgerFlag(fs *flag.FlagSet, p *string) {
	fs.StringVar(p, "ledger", "", ledgerFlagUsage)
}
