package ledger

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// tcpUserTimeout sets TCP_USER_TIMEOUT on a socket the client dials: data it sent that the
// server has not acknowledged within d ends the connection, so that a statement sent to a
// server gone silent fails instead of waiting for the kernel's retransmissions (15 minutes and
// more).
func tcpUserTimeout(d time.Duration) func(network, address string, c syscall.RawConn) error {
	return func(network, _ string, c syscall.RawConn) error {
		if network != "tcp" && network != "tcp4" && network != "tcp6" {
			return nil
		}
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(d.Milliseconds()))
		})
		if err != nil {
			return err
		}
		return serr
	}
}
