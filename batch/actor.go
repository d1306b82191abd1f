package batch

import (
	"context"
	"os"
	"os/user"

	"github.com/payout/payout/ledger"
)

// CallbackActor is the actor of the events the callback receiver records: the service speaks.
const CallbackActor = "service callback"

// Actor names who runs the command, for the audit trail: the operating-system account (what
// cron, sudo and file ownership already establish) and the host, as "user@host".
func Actor() string {
	name := "unknown user"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	return name + "@" + hostname()
}

func hostname() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		return "unknown host"
	}
	return host
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
