// Package retry writes a run's retry file: the rows of its input still unpaid, each under a reference that is safe to pay again.
package retry
