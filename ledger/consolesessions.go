package ledger

import "github.com/payout/payout/ledger/consolestore"

// ConsoleSessions is the web console's sessions, kept in this ledger's database so that every
// console host on the ledger shares them.
func (db *DB) ConsoleSessions() *consolestore.Store { return consolestore.New(db.sql) }
