package hotmarks

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/tickgrid"
	"github.com/strata-cache/strata/tiers/hotkeys"
)

// maxOps is the most puts one transaction carries: etcd's default
// --max-txn-ops.
const maxOps = 128

// run is the goroutine: it watches RowPrefix and writes the buffer at
// the write's due time (writeDue). One goroutine does both: the watch is
// pulled with a deadline at the due write, or, while nothing waits to be
// written, with no deadline and a context the first Publish cancels
// (wake), so an idle strata's marks never wake it. A store.Watch keeps
// its place when a Next ends on its context.
func (s *Shared) run() {
	defer close(s.done)
	have := make(map[string]hotkeys.Mark) // the copy; owned by this goroutine
	w := s.b.Watch(RowPrefix, 0)
	defer func() { w.Close() }()
	var rev int64 // revision of the copy
	failures := 0
	var due time.Time // the next write; zero while nothing waits
	for {
		now := time.Now()
		s.mu.Lock()
		due = writeDue(due, now, len(s.pending) > 0, s.cfg.Interval)
		if !due.IsZero() && !now.Before(due) {
			s.mu.Unlock()
			s.write(have)
			due = time.Time{}
			continue
		}
		var ctx context.Context
		var cancel context.CancelFunc
		if due.IsZero() {
			ctx, cancel = context.WithCancel(s.ctx)
			s.wake = cancel
		} else {
			ctx, cancel = context.WithDeadline(s.ctx, due)
		}
		s.mu.Unlock()
		b, err := w.Next(ctx)
		s.mu.Lock()
		s.wake = nil
		s.mu.Unlock()
		cancel()
		switch {
		case err == nil:
			s.apply(have, b)
			rev, failures = b.Revision, 0
		case s.ctx.Err() != nil:
			return
		case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
			// A write is due, or the first mark since the last write
			// arrived: the top of the loop decides.
		case errors.Is(err, store.ErrClosed):
			// The store's client was closed under us: Marks keeps the
			// last copy; nothing more can be written or seen.
			return
		default:
			// A failure the watch could not retry: open it again where
			// the copy is (a Reset if that history is gone), after a
			// pause that grows to a second.
			s.watchErrors.Add(1)
			w.Close()
			from := int64(0)
			if rev > 0 {
				from = rev + 1
			}
			w = s.b.Watch(RowPrefix, from)
			if !s.pause(failures) {
				return
			}
			failures++
		}
	}
}

// writeDue is when the buffered marks are next written, given the due
// time kept so far (zero: none), whether marks wait in the buffer and the
// write interval: a due time once set stays until the write; marks that
// find none are written at the next multiple of interval on the
// process's timer grid (within one interval, as a ticker would, sharing
// its wake-up with the other periodic work); with nothing buffered there
// is nothing to write, and no due time.
func writeDue(due, now time.Time, waiting bool, interval time.Duration) time.Time {
	switch {
	case !due.IsZero():
		return due
	case !waiting:
		return time.Time{}
	}
	return now.Add(tickgrid.Until(now, interval))
}

// pause waits 50ms doubling to 1s; false when Close came first.
func (s *Shared) pause(failures int) bool {
	d := min(50*time.Millisecond<<min(failures, 5), time.Second)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// apply brings the copy to the batch's revision and publishes it.
func (s *Shared) apply(have map[string]hotkeys.Mark, b store.Batch) {
	if b.Reset {
		clear(have)
	}
	for _, c := range b.Changes {
		key, ok := strings.CutPrefix(c.Row.Key, RowPrefix)
		if !ok {
			continue
		}
		if c.Deleted {
			delete(have, key)
			continue
		}
		m, err := decodeMark(key, c.Row.Value)
		if err != nil {
			s.invalid.Add(1)
			delete(have, key)
			continue
		}
		have[key] = m
	}
	view := make([]hotkeys.Mark, 0, len(have))
	for _, m := range have {
		view = append(view, m)
	}
	sort.Slice(view, func(a, b int) bool { return view[a].Key < view[b].Key })
	s.view.Store(&view)
}

// write puts the buffered marks as rows under one fresh lease of TTL
// Hold. What fails goes back to the buffer for the next write.
func (s *Shared) write(have map[string]hotkeys.Mark) {
	s.mu.Lock()
	pending := s.pending
	if len(pending) == 0 {
		s.mu.Unlock()
		return
	}
	s.pending = make(map[string]hotkeys.Mark, len(pending))
	s.mu.Unlock()

	marks := toWrite(pending, have, s.now.Load(), int64(s.cfg.Hold))
	s.cooled.Add(uint64(len(pending) - len(marks)))
	if len(marks) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.Timeout)
	defer cancel()
	lease, err := s.b.GrantLease(ctx, s.ttl)
	if err != nil {
		s.requeue(marks)
		return
	}
	for i := 0; i < len(marks); i += maxOps {
		chunk := marks[i:min(i+maxOps, len(marks))]
		ops := make([]store.Op, len(chunk))
		for j, m := range chunk {
			ops[j] = store.PutLease(RowPrefix+m.Key, encodeMark(m), lease)
		}
		if _, err := s.b.Txn(ctx, nil, ops); err != nil {
			s.requeue(marks[i:])
			return
		}
		s.written.Add(uint64(len(chunk)))
	}
	s.writes.Add(1)
}

// requeue puts marks that could not be written back in the buffer, under
// reports that arrived meanwhile.
func (s *Shared) requeue(marks []hotkeys.Mark) {
	s.writeErrors.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	for _, m := range marks {
		_ = s.addLocked(m)
	}
}
