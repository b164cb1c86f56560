package locality

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-cache/strata/tiers/locality/loccache"
)

// The location table goes from Migrating straight to Stable, but a region
// does not stop being a destination at one instant: fills started under
// Migrating may still hold a placeholder (until they store or release it,
// or its lease TTL ends), on any loop of this strata or in another strata
// of the region, and another strata may apply Stable later than we do
// and still fill from the source. So from when this strata first sees a
// μ-shard migrating here until a fill lease after it sees it Stable, it
// keeps a window open in which a Stable view still carries the
// destination's duties but the fills: writes delete at the old source,
// reads skip placeholders. A strata that lags another by more than a
// fill lease is not covered; the placement service's wait for every
// strata's acknowledgement of Migrating before Stable bounds that lag.
//
// The windows are shared by the loops: a loop that never cached the
// μ-shard while it migrated still reads a placeholder as a miss. open
// counts them, so the steady path pays one atomic load; while any is
// open, Stable-local requests take the task path, which asks for their
// own μ-shard.

// maxMigrating bounds a window whose move never reached Stable here (a
// lost update, a rolled-back move): past it the steady path is restored.
const maxMigrating = time.Hour

type settleSet struct {
	open atomic.Int32 // len(m)
	mu   sync.Mutex   // guards m
	m    map[string]settleWindow
}

type settleWindow struct {
	source  string
	epoch   uint64
	until   time.Time
	settled bool // Stable seen: until is a fill lease after it
}

// migrating opens (or keeps) name's window for the move of epoch from
// source.
func (s *settleSet) migrating(name, source string, epoch uint64, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w, ok := s.m[name]; ok && w.epoch >= epoch {
		return
	}
	s.setLocked(name, settleWindow{source: source, epoch: epoch, until: now.Add(maxMigrating)}, now)
}

// stable starts the end of name's window at epoch: it closes at until.
func (s *settleSet) stable(name string, epoch uint64, until time.Time) {
	if s.open.Load() == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.m[name]
	if !ok || w.epoch != epoch || w.settled {
		return
	}
	w.until, w.settled = until, true
	s.m[name] = w
}

// forget drops name's window if its epoch is older than epoch (the
// μ-shard moved on).
func (s *settleSet) forget(name string, epoch uint64) {
	if s.open.Load() == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if w, ok := s.m[name]; ok && w.epoch < epoch {
		delete(s.m, name)
		s.open.Store(int32(len(s.m)))
	}
}

func (s *settleSet) setLocked(name string, w settleWindow, now time.Time) {
	if s.m == nil {
		s.m = map[string]settleWindow{}
	}
	s.m[name] = w
	if len(s.m) > 64 { // sweep now and then
		for n, x := range s.m {
			if !now.Before(x.until) {
				delete(s.m, n)
			}
		}
	}
	s.open.Store(int32(len(s.m)))
}

// source returns the old source of name while its window at epoch is
// open at now.
func (s *settleSet) source(name string, epoch uint64, now time.Time) (string, bool) {
	if s.open.Load() == 0 {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.m[name]
	if !ok {
		return "", false
	}
	if !now.Before(w.until) {
		delete(s.m, name)
		s.open.Store(int32(len(s.m)))
		return "", false
	}
	return w.source, w.epoch == epoch
}

// observe notes a view of name this strata received (a lookup's answer,
// or a row change from the watch) for the settle windows.
func (t *Tier) observe(name string, loc loccache.Location) {
	if loc.Owner != t.cfg.Region {
		t.settle.forget(name, loc.Epoch)
		return
	}
	switch loc.State {
	case loccache.Migrating:
		if loc.Source != "" {
			t.settle.migrating(name, loc.Source, loc.Epoch, t.cfg.Now())
		}
	case loccache.Stable:
		t.settle.stable(name, loc.Epoch, t.cfg.Now().Add(t.cfg.FillLease))
		t.settle.forget(name, loc.Epoch)
	default:
		t.settle.forget(name, loc.Epoch)
	}
}
