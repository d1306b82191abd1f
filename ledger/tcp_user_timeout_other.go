//go:build !linux

package ledger

import (
	"syscall"
	"time"
)

// tcpUserTimeout does nothing where TCP_USER_TIMEOUT is unknown: the keepalives still end a
// connection to a server gone silent, once it is idle.
func tcpUserTimeout(time.Duration) func(network, address string, c syscall.RawConn) error {
	return nil
}
