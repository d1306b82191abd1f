// Package actor names who does what the audit trail records.
package actor

import (
	"os"
	"os/user"
	"strconv"
)

// Callback is the actor of the events the callback receiver records: the service speaks.
const Callback = "service callback"

// Current names who runs the command, for the audit trail: the operating-system account (what
// cron, sudo and file ownership already establish) and the host, as "user@host". The account is
// looked up by the process's uid alone, never taken from the environment ($USER, which anyone
// sets): an account without a passwd entry is "uid N", the same for every process it runs.
func Current() string {
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
