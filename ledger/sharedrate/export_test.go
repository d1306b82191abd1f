package sharedrate

import (
	"context"
	"time"
)

// WaitGrant is Wait, telling also when the server granted the request: the time, on the
// database server's clock, before which it would not have gone. The tests measure the limiter's
// spacing by it.
func (l *Limiter) WaitGrant(ctx context.Context) (time.Time, error) {
	granted, _, err := l.wait(ctx)
	return granted, err
}
