// Package read reads a payout file (CSV or XLSX) and validates its rows: OpenFile streams the rows
// of a file as the user typed them, refusing a file that is not one (wrong type, too large, not
// UTF-8, a bad header, a zip bomb), and a Validator turns each row into a Payment or says, by
// line and column, why it cannot be paid (bad reference, unknown bank, malformed account or
// amount, a reference repeated in the file, a total too large). WriteTemplate writes an empty
// input file with the expected header.
//
// A file is opened as package untrusted opens what someone else may have named: never a FIFO or
// a device, never through a symbolic link another account made. A header that names no column
// of a payout file is described (length, fields, three characters), never quoted: the file may
// be a secret the running account can read. A workbook is read for what people see in it: a
// hidden row, a hidden or too narrow payout column, a formula, and a money or account cell whose
// number format shows another value than it holds (xlsx_formats.go) are refused, naming the cell.
//
// It never calls the service nor opens the ledger: the providers a bank name resolves to are
// given in ValidateOptions.
package read
