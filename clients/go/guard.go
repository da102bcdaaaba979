package switchyard

import (
	"context"
	"time"
)

// guarded runs one operation on a stream, cancelling the stream (cancel) if
// ctx ends or timeout passes first, so a stalled server cannot block the
// caller for ever.
func guarded(ctx context.Context, timeout time.Duration, cancel context.CancelFunc, op func() error) error {
	t := time.AfterFunc(timeout, cancel)
	defer t.Stop()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	return op()
}
