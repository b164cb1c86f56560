package etcdstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/strata-cache/strata/control/store"
)

// Watch implements store.Watcher over an etcd watch stream. The etcd
// client resumes a broken stream from the next revision by itself; when
// the revisions it needs were compacted meanwhile, it reports the compact
// revision and ends the stream, and Next answers with a Reset read of the
// whole prefix. A stream that ends for another reason is opened again from
// the next revision.
func (s *Store) Watch(prefix string, fromRev int64) store.Watch {
	ctx, cancel := context.WithCancel(s.c.Ctx())
	return &watch{s: s, prefix: prefix, next: fromRev, reset: fromRev <= 0, ctx: ctx, cancel: cancel}
}

type watch struct {
	s      *Store
	prefix string
	ctx    context.Context // ends with Close or the client
	cancel context.CancelFunc

	// Owned by the goroutine calling Next.
	next     int64 // first revision not delivered yet
	reset    bool  // deliver a snapshot next
	ch       clientv3.WatchChan
	stopCh   context.CancelFunc // ends the current stream
	failures int                // consecutive streams that ended without events

	closeOnce sync.Once
}

func (w *watch) Close() { w.closeOnce.Do(w.cancel) }

func (w *watch) Next(ctx context.Context) (store.Batch, error) {
	for {
		if w.ctx.Err() != nil {
			w.drop()
			return store.Batch{}, store.ErrClosed
		}
		if w.reset {
			b, err := w.snapshot(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return store.Batch{}, ctx.Err()
				}
				if errors.Is(err, store.ErrClosed) {
					return store.Batch{}, err
				}
				if err := w.pause(ctx); err != nil {
					return store.Batch{}, err
				}
				continue
			}
			return b, nil
		}
		if w.ch == nil {
			sctx, stop := context.WithCancel(w.ctx)
			w.ch, w.stopCh = w.s.c.Watch(sctx, w.s.key(w.prefix), clientv3.WithPrefix(), clientv3.WithRev(w.next)), stop
		}
		var resp clientv3.WatchResponse
		var ok bool
		select {
		case <-ctx.Done():
			return store.Batch{}, ctx.Err()
		case resp, ok = <-w.ch:
		}
		switch {
		case !ok || resp.Canceled || resp.Err() != nil:
			compacted := resp.CompactRevision != 0 || errors.Is(resp.Err(), rpctypes.ErrCompacted)
			w.drop()
			if compacted {
				w.reset = true
				continue
			}
			if err := w.pause(ctx); err != nil {
				return store.Batch{}, err
			}
			continue
		case len(resp.Events) == 0: // progress notification
			continue
		}
		w.failures = 0
		b := store.Batch{Changes: make([]store.Change, len(resp.Events))}
		for i, ev := range resp.Events {
			row := w.s.row(ev.Kv)
			if ev.Type == mvccpb.DELETE {
				row = store.Row{Key: row.Key, ModRevision: row.ModRevision}
			}
			b.Changes[i] = store.Change{Deleted: ev.Type == mvccpb.DELETE, Row: row}
			b.Revision = ev.Kv.ModRevision
		}
		w.next = b.Revision + 1
		return b, nil
	}
}

// snapshot reads the whole prefix for a Reset batch.
func (w *watch) snapshot(ctx context.Context) (store.Batch, error) {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(w.ctx, cancel)
	defer stop()
	rows, rev, err := w.s.List(rctx, w.prefix)
	if err != nil {
		return store.Batch{}, err
	}
	b := store.Batch{Reset: true, Revision: rev, Changes: make([]store.Change, len(rows))}
	for i, r := range rows {
		b.Changes[i] = store.Change{Row: r}
	}
	w.reset, w.next = false, rev+1
	return b, nil
}

// drop ends the current stream.
func (w *watch) drop() {
	if w.stopCh != nil {
		w.stopCh()
	}
	w.ch, w.stopCh = nil, nil
}

// pause waits before opening a stream again after a failure: 50ms doubling
// to 1s, so a server that is down is not spun on.
func (w *watch) pause(ctx context.Context) error {
	d := 50 * time.Millisecond << min(w.failures, 5)
	if d > time.Second {
		d = time.Second
	}
	w.failures++
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-w.ctx.Done():
		return store.ErrClosed
	case <-t.C:
		return nil
	}
}
