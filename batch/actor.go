package batch

import (
	"context"
	"os"
	"os/user"

	"github.com/payout/payout/ledger"
)

// CallbackActor is the actor of the events the callback receiver records: the service speaks.
const CallbackActor = "service callback"

// Actor names who runs this process, for the audit trail: the OS user and the host.
func Actor() string {
	name := "unknown user"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown host"
	}
	return name + "@" + host
}

// ChainHeadText is the ledger's chain head as a report prints it, read when the report is
// written: a report held by an auditor then pins the trail up to that event.
func ChainHeadText(ctx context.Context, db *ledger.DB) string {
	head, err := db.ChainHead(ctx)
	if err != nil {
		return "unavailable: " + err.Error()
	}
	return head.String()
}
