package batch

import (
	"context"
	"os"
	"os/user"
	"strconv"

	"github.com/payout/payout/ledger"
)

// CallbackActor is the actor of the events the callback receiver records: the service speaks.
const CallbackActor = "service callback"

// Actor names who runs the command, for the audit trail: the operating-system account (what
// cron, sudo and file ownership already establish) and the host, as "user@host". The account is
// looked up by the process's uid alone, never taken from the environment ($USER, which anyone
// sets): an account without a passwd entry is "uid N", the same for every process it runs.
func Actor() string {
	uid := strconv.Itoa(os.Getuid())
	name := "uid " + uid
	if u, err := user.LookupId(uid); err == nil && u.Username != "" {
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
func ChainHeadText(ctx context.Context, db interface {
	ChainHead(ctx context.Context) (ledger.ChainHead, error)
}) string {
	head, err := db.ChainHead(ctx)
	if err != nil {
		return "unavailable: " + err.Error()
	}
	return head.String()
}
