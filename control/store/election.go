package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrSessionEnded: a campaign's session ended before it won.
var ErrSessionEnded = errors.New("store: session ended")

// kv is what the portable election needs of a store.
type kv interface {
	Reader
	Writer
	Watcher
}

// CandidateKey is the row a session campaigns with in the election called
// name: the same layout as etcd's concurrency package (prefix, then the
// lease id in hex), so one observer reads both stores alike.
func CandidateKey(name string, lease LeaseID) string {
	return fmt.Sprintf("%s%x", ElectionPrefix(name), int64(lease))
}

// campaign is the election over the store's own primitives, for stores
// without a native one: put the candidate row with the session's lease
// unless it is there, then wait until no candidate created earlier
// remains. On failure it withdraws the candidate row.
func campaign(ctx context.Context, s kv, sess Session, name, value string) (Leadership, error) {
	key := CandidateKey(name, sess.Lease())
	conds := []Cond{IfAbsent(key)}
	res, err := s.Txn(ctx, conds, []Op{PutLease(key, []byte(value), sess.Lease())})
	if err != nil {
		return nil, err
	}
	created := res.Revision
	if !res.Succeeded { // this session campaigns again: keep its place
		created = res.Current[0].CreateRevision
		if _, err := s.Txn(ctx, []Cond{IfCreateRevision(key, created)}, []Op{PutLease(key, []byte(value), sess.Lease())}); err != nil {
			return nil, err
		}
	}
	won, err := waitTurn(ctx, s, sess, name, key)
	if err != nil || !won {
		bounded, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, _ = s.Txn(bounded, []Cond{IfCreateRevision(key, created)}, []Op{Delete(key)})
		if err == nil {
			err = ErrSessionEnded
		}
		return nil, err
	}
	return newLeadership(s, sess, key, created), nil
}

// waitTurn follows the election prefix until key leads (true) or is gone
// (false).
func waitTurn(ctx context.Context, s kv, sess Session, name, key string) (bool, error) {
	w := s.Watch(ElectionPrefix(name), 0)
	defer w.Close()
	rows := make(map[string]Row)
	for {
		b, err := w.Next(ctx)
		if err != nil {
			return false, err
		}
		ApplyBatch(rows, b)
		if _, ok := rows[key]; !ok {
			return false, nil
		}
		list := make([]Row, 0, len(rows))
		for _, r := range rows {
			list = append(list, r)
		}
		if l, _ := LeaderOf(list); l.Key == key {
			return true, nil
		}
		select {
		case <-sess.Done():
			return false, nil
		default:
		}
	}
}

// ApplyBatch applies a watch batch to a consumer's copy of a prefix.
func ApplyBatch(rows map[string]Row, b Batch) {
	if b.Reset {
		clear(rows)
	}
	for _, c := range b.Changes {
		if c.Deleted {
			delete(rows, c.Row.Key)
		} else {
			rows[c.Row.Key] = c.Row
		}
	}
}

// leadership is a won portable election.
type leadership struct {
	w       Writer
	key     string
	created int64
	lost    <-chan struct{}

	mu       sync.Mutex // guards resigned
	resigned chan struct{}
}

func newLeadership(w Writer, sess Session, key string, created int64) *leadership {
	l := &leadership{w: w, key: key, created: created, resigned: make(chan struct{})}
	l.lost = LostWhen(sess, l.resigned)
	return l
}

// LostWhen returns the Done channel of a leadership: closed once the
// session ends or resigned is closed. It starts one goroutine, owned by
// the leadership, that ends with either. Both stores' leaderships use it.
func LostWhen(sess Session, resigned <-chan struct{}) <-chan struct{} {
	lost := make(chan struct{})
	go func() {
		select {
		case <-sess.Done():
		case <-resigned:
		}
		close(lost)
	}()
	return lost
}

func (l *leadership) Key() string           { return l.key }
func (l *leadership) Fence() Cond           { return IfCreateRevision(l.key, l.created) }
func (l *leadership) Done() <-chan struct{} { return l.lost }

func (l *leadership) Resign(ctx context.Context) error {
	l.mu.Lock()
	select {
	case <-l.resigned:
	default:
		close(l.resigned)
	}
	l.mu.Unlock()
	_, err := l.w.Txn(ctx, []Cond{l.Fence()}, []Op{Delete(l.key)})
	return err
}

// LeaderWatch follows who leads the election called name: the admin API
// shows it, and a strata that reports to a loop's leader finds it here.
// One goroutine, the consumer's, calls Next.
type LeaderWatch struct {
	w    Watch
	rows map[string]Row
	last Row
	seen bool
}

// WatchLeader starts following the election called name.
func WatchLeader(w Watcher, name string) *LeaderWatch {
	return &LeaderWatch{w: w.Watch(ElectionPrefix(name), 0), rows: make(map[string]Row)}
}

// Next blocks until the leader is not the one it last returned (the first
// call returns the current one) and returns it; ok is false while no
// candidate stands. The leader row's Value is what it campaigned with.
// It reports the leader as of each watch batch, so a leader that came and
// went between two calls may never be returned.
func (l *LeaderWatch) Next(ctx context.Context) (leader Row, ok bool, err error) {
	for {
		b, err := l.w.Next(ctx)
		if err != nil {
			return Row{}, false, err
		}
		ApplyBatch(l.rows, b)
		list := make([]Row, 0, len(l.rows))
		for _, r := range l.rows {
			list = append(list, r)
		}
		cur, ok := LeaderOf(list)
		if l.seen && cur.Key == l.last.Key && cur.CreateRevision == l.last.CreateRevision && cur.ModRevision == l.last.ModRevision {
			continue
		}
		l.last, l.seen = cur, true
		return cur, ok, nil
	}
}

// Close ends the watch.
func (l *LeaderWatch) Close() { l.w.Close() }
