package batch

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"

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

// FileOwner names the account that owns the file at path, as "user@host": the account that
// wrote the file, or dropped it into a watched folder.
func FileOwner(path string) (string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("owner of %s: %w", path, err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return "", fmt.Errorf("owner of %s: this system does not say who owns a file", path)
	}
	uid := strconv.FormatUint(uint64(st.Uid), 10)
	name := "uid " + uid
	if u, err := user.LookupId(uid); err == nil && u.Username != "" {
		name = u.Username
	}
	return name + "@" + hostname(), nil
}

// sameAccount reports whether two "user@host" names are one account. Only the user name counts:
// the file's owner is known on this host only, and one person's account on two hosts is still
// one person.
func sameAccount(a, b string) bool {
	return accountName(a) == accountName(b)
}

func accountName(actor string) string {
	if i := strings.LastIndex(actor, "@"); i >= 0 {
		return actor[:i]
	}
	return actor
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
