//go:build !linux

package ledger

import "time"

// bootNow is the monotonic clock where no clock that counts a suspension is known.
func bootNow() time.Duration { return time.Since(processStart) }
