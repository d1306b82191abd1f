package ledger

import (
	"time"

	"golang.org/x/sys/unix"
)

// bootNow reads CLOCK_BOOTTIME: unlike the monotonic clock Go's time uses, it keeps counting
// while the machine is suspended, so that a lease measured on it expires during a suspension
// as it does for the database server, whose clock went on.
func bootNow() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return time.Since(processStart) // never on Linux 2.6.39 and later
	}
	return time.Duration(ts.Nano())
}
