package store

import (
	"context"
	"sort"
	"strings"
	"sync"
)

// Watch implements Watcher. The watch holds no goroutine: Next reads the
// store's change log under its lock and waits on its change signal.
func (c *MemoryClient) Watch(prefix string, fromRev int64) Watch {
	return &memWatch{c: c, prefix: prefix, next: fromRev, reset: fromRev <= 0, stop: make(chan struct{})}
}

type memWatch struct {
	c      *MemoryClient
	prefix string
	// next and reset belong to the goroutine calling Next.
	next  int64 // first revision not delivered yet
	reset bool  // deliver a snapshot next

	closeOnce sync.Once
	stop      chan struct{}
}

func (w *memWatch) Close() { w.closeOnce.Do(func() { close(w.stop) }) }

func (w *memWatch) Next(ctx context.Context) (Batch, error) {
	m := w.c.m
	for {
		select {
		case <-w.stop:
			return Batch{}, ErrClosed
		default:
		}
		m.mu.Lock()
		err := w.c.checkLocked()
		if err == ErrClosed {
			m.mu.Unlock()
			return Batch{}, err
		}
		if err == nil { // a partitioned client waits, as a disconnected etcd watch does
			if b, ok := w.pollLocked(); ok {
				m.mu.Unlock()
				return b, nil
			}
		}
		changed := m.changed
		m.mu.Unlock()
		select {
		case <-ctx.Done():
			return Batch{}, ctx.Err()
		case <-w.stop:
			return Batch{}, ErrClosed
		case <-changed:
		}
	}
}

// pollLocked returns what the watch has to deliver now, if anything.
func (w *memWatch) pollLocked() (Batch, bool) {
	m := w.c.m
	if w.reset || w.next < m.firstRev {
		rows := m.listLocked(w.prefix)
		b := Batch{Reset: true, Revision: m.rev, Changes: make([]Change, len(rows))}
		for i, r := range rows {
			b.Changes[i] = Change{Row: r}
		}
		w.reset, w.next = false, m.rev+1
		return b, true
	}
	i := sort.Search(len(m.log), func(i int) bool { return m.log[i].rev >= w.next })
	var b Batch
	for ; i < len(m.log); i++ {
		e := m.log[i]
		if strings.HasPrefix(e.change.Row.Key, w.prefix) {
			b.Changes = append(b.Changes, e.change)
			b.Revision = e.rev
		}
	}
	if w.next <= m.rev {
		w.next = m.rev + 1
	}
	return b, len(b.Changes) > 0
}
