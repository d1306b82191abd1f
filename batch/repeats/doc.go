// Package repeats holds the rows of a file that may pay again what the ledger paid recently to the same account under another reference.
package repeats
