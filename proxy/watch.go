package proxy

import (
	"sync"
	"time"
)

// The watcher is the server's one goroutine for timed work, and it sleeps
// while there is none, so an idle proxy takes no wakeups of its own. It
// wakes for:
//   - a new stall generation (stall.Detector.Changed), which it hands to
//     every loop (tickStall);
//   - a loop's first paused connection (pause), after which it ticks every
//     tickPaused until no loop has one (resumePaused).
//
// Invariant: whenever some loop's pausedN is above zero, either the
// watcher's timer is armed or a wake is queued in pauseWake (pause sends
// one on every rise from zero, and the watcher reads pausedN after
// draining it).

// startWatch starts the watcher and returns its stop, which waits for it
// and is idempotent.
func (s *Server) startWatch() (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go s.watch(quit, done)
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		<-done
	}
}

func (s *Server) watch(quit <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	timer := time.NewTimer(tickPaused)
	timer.Stop()
	for {
		changed := s.stall.Changed() // before tickStall reads Gen: see Changed
		s.tickStall()
		var tick <-chan time.Time
		if s.resumePaused() {
			timer.Reset(tickPaused)
			tick = timer.C
		}
		select {
		case <-quit:
			timer.Stop()
			return
		case <-changed:
		case <-s.pauseWake:
		case <-tick:
		}
		timer.Stop()
	}
}
