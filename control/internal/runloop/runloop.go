// Package runloop is the lifecycle the control plane's elected loops
// share (the shard-assignment runner, the placement runner): one
// goroutine, started once, owned by the Loop, which Stop cancels and
// waits for within a deadline.
package runloop

import (
	"context"
	"sync"
)

// Loop runs one function on its own goroutine between Start and Stop.
type Loop struct {
	stopOnce sync.Once
	cancel   context.CancelFunc
	done     chan struct{}
}

// New returns a loop not yet started.
func New() *Loop { return &Loop{done: make(chan struct{})} }

// Start runs run on a new goroutine with a context that Stop cancels.
// Call it at most once, before Stop.
func (l *Loop) Start(run func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go func() {
		defer close(l.done)
		run(ctx)
	}()
}

// Stop cancels the loop and waits until its function returned, or ctx
// ends. Idempotent; a loop never started stops at once.
func (l *Loop) Stop(ctx context.Context) error {
	l.stopOnce.Do(func() {
		if l.cancel != nil {
			l.cancel()
		} else {
			close(l.done)
		}
	})
	select {
	case <-l.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
