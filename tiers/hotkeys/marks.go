package hotkeys

import (
	"sort"
	"sync"
)

// Mark says that a key is hot and split, fleet-wide.
type Mark struct {
	Key  string
	Kind Kind
	K    int
	// Since is when the key was first marked, Seen when a strata last
	// measured it hot (nanoseconds).
	Since, Seen int64
}

// MarkStore shares marks among the stratas of a fleet, so that all split
// the same keys with the same K. It is declared by its consumer, this
// package; LocalMarks is the in-process implementation, and
// control/hotmarks the fleet-wide one, over the control store.
//
// Both methods are called from event loops, at most about once a second
// per loop, and must not block on the network: a remote store publishes
// in the background and serves Marks from its watched copy.
type MarkStore interface {
	// Publish records that each mark's key measured hot at its Seen time.
	// A key already marked keeps its Since.
	Publish(marks []Mark)
	// Marks returns the marks in force at now: those seen within the
	// store's hold time.
	Marks(now int64) []Mark
}

// expired reports whether m has cooled down for longer than hold at now:
// the key is then unsplit (its reads still aggregate the parts).
func expired(m *Mark, now, hold int64) bool { return now-m.Seen > hold }

// LocalMarks is a MarkStore for one process.
type LocalMarks struct {
	hold int64

	mu    sync.Mutex // guards marks
	marks map[string]Mark
}

var _ MarkStore = (*LocalMarks)(nil)

// NewLocalMarks keeps each mark for hold nanoseconds after it was last
// seen hot.
func NewLocalMarks(hold int64) *LocalMarks {
	return &LocalMarks{hold: hold, marks: map[string]Mark{}}
}

// Publish implements MarkStore.
func (l *LocalMarks) Publish(marks []Mark) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range marks {
		if old, ok := l.marks[m.Key]; ok {
			m.Since = old.Since
			if old.Seen > m.Seen {
				m.Seen = old.Seen
			}
		}
		l.marks[m.Key] = m
	}
}

// Marks implements MarkStore; it forgets the marks that expired.
func (l *LocalMarks) Marks(now int64) []Mark {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Mark, 0, len(l.marks))
	for k, m := range l.marks {
		if expired(&m, now, l.hold) {
			delete(l.marks, k)
			continue
		}
		out = append(out, m)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Key < out[b].Key })
	return out
}

// markSet is the marks in force as the data path reads them: immutable
// once published.
type markSet struct {
	byKey map[string]Mark
}

func (t *Tier) isMarked(key []byte) bool {
	ms := t.marked.Load()
	if len(ms.byKey) == 0 {
		return false
	}
	_, ok := ms.byKey[string(key)]
	return ok
}
