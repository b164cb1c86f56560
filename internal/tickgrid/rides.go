package tickgrid

import (
	"slices"
	"sync"
	"time"
)

// Rides is periodic work carried by another goroutine's wake-ups instead
// of a goroutine of its own: the carrier, which wakes on the grid for work
// of its own, calls Run after that work, and Run does every ride whose
// instant has come.
//
// It exists because sharing a grid instant does not by itself share the
// wake-up. Two goroutines made runnable by the same expiry each get a
// thread: the poller's thread runs one and the runtime wakes a second
// thread for the other. On an idle strata, the one-second history sample
// on a ticker of its own cost two thread wake-ups a second on the
// heartbeat's instants (6.1 a second in all, under strace: the sample's
// expiry and the heartbeat's returned from one epoll_wait and a second
// thread was woken); carried by the heartbeat, none (4.0 a second).
//
// A ride runs at the first carrier wake-up at or after each multiple of
// its period on the grid, at most once per multiple; a carrier that wakes
// less often than a ride's period runs it once per wake-up, late. A ride
// runs on the carrier's goroutine, under Rides' lock: it must be quick
// and must not block (it delays the carrier's next wake-up), and must not
// add or remove rides.
type Rides struct {
	mu    sync.Mutex // held while rides run, so a removal waits out its ride
	rides []*ride
}

type ride struct {
	period time.Duration
	last   time.Duration // the multiple it last ran for, since the origin
	f      func()
}

// Add starts a ride of f every period (which must be positive); its first
// run is at the first multiple after now. The returned remove ends it,
// waiting for a run in progress, so f is not running and never runs again
// once remove has returned; remove is idempotent and must not be called
// from a ride.
func (r *Rides) Add(period time.Duration, f func()) (remove func()) {
	return r.addAt(time.Now(), period, f)
}

// addAt is Add at the time now.
func (r *Rides) addAt(now time.Time, period time.Duration, f func()) (remove func()) {
	if period <= 0 {
		panic("tickgrid: non-positive period")
	}
	rd := &ride{period: period, last: floor(now.Sub(origin), period), f: f}
	r.mu.Lock()
	r.rides = append(r.rides, rd)
	r.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if i := slices.Index(r.rides, rd); i >= 0 {
				r.rides = slices.Delete(r.rides, i, i+1)
			}
		})
	}
}

// Run does, in the order they were added, the rides whose instant has
// come by now.
func (r *Rides) Run(now time.Time) {
	since := now.Sub(origin)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rd := range r.rides {
		if at, ok := due(rd.last, since, rd.period); ok {
			rd.last = at
			rd.f()
		}
	}
}

// Len is the number of rides.
func (r *Rides) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.rides)
}

// due is the decision: a ride that last ran for the multiple last is due
// at sinceOrigin when a later multiple of period has come; at is the
// newest one, so a carrier that slept through several runs the ride once.
func due(last, sinceOrigin, period time.Duration) (at time.Duration, ok bool) {
	at = floor(sinceOrigin, period)
	return at, at > last
}
