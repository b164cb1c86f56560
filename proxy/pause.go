package proxy

import (
	"context"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// Back-pressure. gnet reads every readable socket into the connection's
// inbound buffer whatever the handler does, and has no call to stop
// reading one connection. So the proxy applies back-pressure one level up:
// a connection whose replies are over their bound stops being parsed; the
// bytes it sent stay unparsed in gnet's inbound buffer; a read event on it
// costs one length check and no parse; and it resumes once its output has
// drained below half the bound. What a paused connection may leave unparsed
// is bounded too (Config.maxInbound): past that the client is neither
// reading nor stopping, and it is disconnected.
//
// The bound is on bytes, projected before each request is parsed:
//
//	gnet's outbound buffer + replies formatted but not written
//	  + requests still waiting for the tier × the connection's reply estimate
//
// A reply computed synchronously (the embedded tiers) is formatted at once,
// so for those tiers the projection is exact and a connection holds at most
// MaxOutboundBytes plus one reply. The estimate covers replies that a
// memcached pool has yet to return; it follows the largest recent reply.
// Over pools a connection therefore holds its bound plus what the
// estimate missed: at most 4 unknown replies when it opens and 64 after,
// each at most one item (MaxItemSize), and usually one reply.
//
// Resuming: a connection paused at MaxInflight resumes when its replies
// complete (flush); one paused for output is checked by its own loop on
// every tick of the watcher (watch.go), because gnet says nothing when its
// outbound buffer drains.

const (
	// traffic parses at most this many bytes of requests per callback, then
	// yields the loop to its other connections and continues in a Wake
	// task. It equals gnet's read size, so parsing keeps pace with reading.
	trafficBudget = 64 << 10
	// replyBudget: a callback that formatted this many bytes of replies
	// also yields, so that copying one client's large values does not keep
	// the loop from the others.
	replyBudget = 256 << 10
	// writeChunk: formatted replies are handed to gnet once they reach this
	// size, rather than at the end of the callback, so a burst is never
	// held twice (in out and in gnet's outbound buffer).
	writeChunk = 64 << 10
	// tickPaused: the watcher checks paused connections this often while
	// there are some, so that a slow reader is refilled soon after it
	// drains; with none, it does not wake.
	tickPaused = time.Millisecond
)

// projectedOut is what the connection holds or will hold in replies if no
// further request is parsed.
func (cn *conn) projectedOut() int {
	return cn.c.OutboundBuffered() + len(cn.out) + len(cn.queue)*cn.replyEst
}

// overBound reports whether parsing must stop before the next request.
func (cn *conn) overBound() bool {
	lim := &cn.srv.cfg
	return len(cn.queue) >= lim.MaxInflight || cn.keys >= lim.MaxInflight || cn.projectedOut() >= lim.MaxOutboundBytes
}

// underLowWater reports whether a paused connection may resume: half of
// each bound, so that a connection at its bound does not pause and resume
// on every reply.
func (cn *conn) underLowWater() bool {
	lim := &cn.srv.cfg
	return len(cn.queue) <= lim.MaxInflight/2 && cn.keys <= lim.MaxInflight/2 && cn.projectedOut() <= lim.MaxOutboundBytes/2
}

// noteReply folds the size of a reply into the estimate: it jumps to a
// larger reply at once and decays by an eighth per smaller one, so a run
// of large values is never underestimated. It never falls below a
// sixty-fourth of the bound: a client that asks for small values and then
// for large ones has at most 64 requests' worth in flight at a tier
// before their size is known.
func (cn *conn) noteReply(n int) {
	if n > cn.replyEst {
		cn.replyEst = n
		return
	}
	cn.replyEst -= (cn.replyEst - n) / 8
	cn.replyEst = max(cn.replyEst, cn.srv.cfg.MaxOutboundBytes/64)
}

// pause stops parsing the connection and lists it on its loop for the
// watcher's check; the loop's first paused connection wakes the watcher.
func (cn *conn) pause() {
	cn.paused = true
	if cn.listed {
		return
	}
	cn.listed = true
	l := cn.loop
	l.paused = append(l.paused, cn)
	if l.pausedN.Add(1) == 1 {
		select {
		case cn.srv.pauseWake <- struct{}{}:
		default: // already woken
		}
	}
}

// resume lets the connection be parsed again; the unparsed bytes get a
// callback through Wake (a task queued behind the loop's ready events).
func (cn *conn) resume() {
	cn.paused = false
	if !cn.closed {
		_ = cn.c.Wake(nil)
	}
}

// checkPaused runs on the loop: it resumes the paused connections whose
// output drained and forgets the ones that closed or resumed already.
func (l *loopState) checkPaused() {
	kept := l.paused[:0]
	for _, cn := range l.paused {
		if cn.paused && !cn.closed && cn.underLowWater() {
			cn.resume()
		}
		if cn.paused && !cn.closed {
			kept = append(kept, cn)
			continue
		}
		cn.listed = false
	}
	for i := len(kept); i < len(l.paused); i++ {
		l.paused[i] = nil
	}
	l.paused = kept
	l.pausedN.Store(int32(len(kept)))
}

// resumePaused is the watcher's work: it asks each loop with paused
// connections to check them, and reports whether any had some.
func (s *Server) resumePaused() bool {
	s.mu.Lock()
	loops := s.loops
	s.mu.Unlock()
	any := false
	for _, l := range loops {
		if l.pausedN.Load() == 0 {
			continue
		}
		any = true
		_ = l.el.Execute(context.Background(), l.checkTask)
	}
	return any
}

// newCheckTask binds checkPaused to l once, so the watcher allocates nothing.
func newCheckTask(l *loopState) gnet.Runnable {
	return gnet.RunnableFunc(func(context.Context) error {
		l.checkPaused()
		return nil
	})
}
