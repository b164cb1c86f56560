package locality

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-cache/strata/control/locality/loccache"
)

// The location table goes from Migrating straight to Stable, but a region
// does not stop being a destination at one instant: fills started under
// Migrating may still hold a placeholder (until they store or release it,
// or its lease TTL ends), and another strata of this or another region
// may apply Stable later than we do and still fill from the source. So
// for one fill lease after this strata sees a μ-shard it serves go from
// Migrating to Stable, it keeps the destination's duties but the fills:
// writes still delete at the old source, reads skip placeholders. A
// strata that lags longer than a fill lease behind another is not
// covered; the placement service's wait for every strata's
// acknowledgement bounds that lag.
//
// The windows are shared by the loops (one strata, one source of truth);
// open counts them so that the steady path pays one atomic load.

type settleSet struct {
	open atomic.Int32 // windows in m (an upper bound while one expires)
	mu   sync.Mutex   // guards m
	m    map[string]settleWindow
}

type settleWindow struct {
	source string
	epoch  uint64
	until  time.Time
}

// begin opens name's window: it settled at epoch here, from source.
func (s *settleSet) begin(name, source string, epoch uint64, until time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]settleWindow{}
	}
	if _, ok := s.m[name]; !ok {
		s.open.Add(1)
	}
	s.m[name] = settleWindow{source: source, epoch: epoch, until: until}
	for n, w := range s.m { // drop the expired ones now and then
		if len(s.m) > 64 && ended(w, until) {
			delete(s.m, n)
			s.open.Add(-1)
		}
	}
}

// ended reports whether w is over at t.
func ended(w settleWindow, t time.Time) bool { return !t.Before(w.until) }

// source returns the old source of name while its window at epoch is
// open at time t.
func (s *settleSet) source(name string, epoch uint64, t time.Time) (string, bool) {
	if s.open.Load() == 0 {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.m[name]
	if !ok {
		return "", false
	}
	if ended(w, t) || w.epoch != epoch {
		if ended(w, t) {
			delete(s.m, name)
			s.open.Add(-1)
		}
		return "", false
	}
	return w.source, true
}

// settled notes a view change of a μ-shard on some loop: from Migrating
// to Stable at one epoch, with this region the owner, opens its window.
func (t *Tier) settled(name string, old, cur loccache.Location) {
	if old.State == loccache.Migrating && cur.State == loccache.Stable && old.Epoch == cur.Epoch &&
		cur.Owner == t.cfg.Region && old.Source != "" {
		t.settle.begin(name, old.Source, cur.Epoch, t.cfg.Now().Add(t.cfg.FillLease))
	}
}
