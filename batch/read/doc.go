// Package read reads a payout file (CSV or XLSX) and validates its rows: OpenFile streams the rows
// of a file as the user typed them, refusing a file that is not one (wrong type, too large, not
// UTF-8, a bad header, a zip bomb), and a Validator turns each row into a Payment or says, by
// line and column, why it cannot be paid (bad reference, unknown bank, malformed account or
// amount, a reference repeated in the file, a total too large). WriteTemplate writes an empty
// input file with the expected header.
//
// It never calls the service nor opens the ledger: the providers a bank name resolves to are
// given in ValidateOptions.
package read
