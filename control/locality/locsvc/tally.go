package locsvc

import (
	"hash/maphash"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/strata-cache/strata/placement"
)

// tallyShardCount spreads Access over this many locks, so event loops
// recording accesses to different μ-shards rarely meet on one.
const tallyShardCount = 64

// forgetBelow: a μ-shard nobody used this interval, not contested, whose
// unshipped local count aged below this is forgotten (it could no longer
// tip a decision).
const forgetBelow = 0.5

// Tally counts one strata's accesses per μ-shard and decides what each
// shipment carries. Only what can change a placement decision ships:
//
//   - a μ-shard this strata's clients used remotely (another region
//     served it) ships every interval it was, with its local count;
//   - a μ-shard this strata served for a peer (Served: it is contested,
//     and this region is most likely its owner) ships its local count
//     every interval for LocalEvery intervals after the last peer request,
//     so the owner's score stands next to the remote one;
//   - every other count ages here (decayed with the policy's half-life,
//     the same decay the placement service applies) and is forgotten
//     once below forgetBelow: a fleet pays nothing per interval for
//     μ-shards nobody moves.
//
// Shipped counts are whole, rounded to the nearest: what rounding added
// or left out is carried here into the next shipment (aged like the
// counts), so the placement service's count of a μ-shard is within half
// an access of this strata's. Rounding down instead would ship nothing
// for an owner that used a μ-shard 0.9 times (decayed), and one foreign
// read would outscore a home count the leader never received.
//
// Access and Served are safe from any goroutine and never block on the
// store; Collect is called by one goroutine at a time (the shipper, or
// the simulation), with a non-decreasing now.
type Tally struct {
	seed       maphash.Seed
	halfLife   time.Duration
	localEvery int
	shards     [tallyShardCount]tallyShard
}

type tallyShard struct {
	mu sync.Mutex // guards m
	m  map[string]*tallyEntry
	_  [48]byte // keep neighbouring shards' locks off one cache line
}

// tallyEntry is one μ-shard. Invariant: n >= remote.
type tallyEntry struct {
	n, remote, served uint64 // this interval: accesses, of them remote, peers' requests served here
	// contested: intervals left in which the local count ships (reset to
	// LocalEvery by a peer request).
	contested int
	// aged: local accesses of earlier intervals not shipped yet; owed:
	// what the last shipment rounded up, to be taken off the next. The
	// count not shipped yet is aged - owed, in (-0.5, ∞).
	aged, owed placement.Decayed
}

// unshipped is e's count not shipped yet, as of now (may be slightly
// negative: a rounded-up shipment not yet made up by accesses).
func (t *Tally) unshipped(e *tallyEntry, now time.Time) float64 {
	return e.aged.Value(now, t.halfLife) - e.owed.Value(now, t.halfLife)
}

// NewTally returns an empty tally whose unshipped counts decay with
// halfLife and whose contested μ-shards ship for localEvery intervals
// after a peer's request (both positive).
func NewTally(halfLife time.Duration, localEvery int) *Tally {
	t := &Tally{seed: maphash.MakeSeed(), halfLife: halfLife, localEvery: localEvery}
	for i := range t.shards {
		t.shards[i].m = make(map[string]*tallyEntry)
	}
	return t
}

// entry returns name's entry with its shard locked; the caller unlocks.
func (t *Tally) entry(name string) (*tallyShard, *tallyEntry) {
	sh := &t.shards[maphash.String(t.seed, name)%tallyShardCount]
	sh.mu.Lock()
	e := sh.m[name]
	if e == nil {
		e = &tallyEntry{}
		sh.m[strings.Clone(name)] = e // name may borrow a request's bytes
	}
	return sh, e
}

// Access counts one request a client of this strata made for name;
// remote: another region served it. No allocation once name is held.
func (t *Tally) Access(name string, remote bool) {
	sh, e := t.entry(name)
	e.n++
	if remote {
		e.remote++
	}
	sh.mu.Unlock()
}

// AccessN counts n requests at once, all remote or all local: for a
// caller that aggregates them (the simulation of strata bench locality).
func (t *Tally) AccessN(name string, n uint64, remote bool) {
	sh, e := t.entry(name)
	e.n += n
	if remote {
		e.remote += n
	}
	sh.mu.Unlock()
}

// Served counts one request a peer region forwarded here for name.
func (t *Tally) Served(name string) {
	sh, e := t.entry(name)
	e.served++
	sh.mu.Unlock()
}

// Len is the number of μ-shards the tally holds.
func (t *Tally) Len() int {
	n := 0
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.Lock()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	return n
}

// Collect ends the interval at now and returns the counts to ship, in
// name order (EncodeBatch front-codes sorted names).
func (t *Tally) Collect(now time.Time) []Count {
	var out []Count
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.Lock()
		for name, e := range sh.m {
			if c, ok := t.collectOne(e, now); ok {
				c.Name = name
				out = append(out, c)
			}
			if e.n == 0 && e.contested == 0 && t.unshipped(e, now) < forgetBelow {
				delete(sh.m, name)
			}
			e.n, e.remote, e.served = 0, 0, 0
		}
		sh.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b Count) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// collectOne folds e's interval into its aged count and says what ships.
func (t *Tally) collectOne(e *tallyEntry, now time.Time) (Count, bool) {
	if e.served > 0 {
		e.contested = t.localEvery
	}
	ship := e.remote > 0 || e.contested > 0
	if e.contested > 0 {
		e.contested--
	}
	if e.n > 0 {
		e.aged = e.aged.Add(now, float64(e.n), t.halfLife)
	}
	if !ship {
		return Count{}, false
	}
	v := t.unshipped(e, now)
	whole := math.Floor(v + 0.5)
	if whole < 1 && e.remote == 0 {
		return Count{}, false
	}
	e.aged, e.owed = placement.Decayed{}, placement.Decayed{}
	if whole <= v {
		e.aged = placement.Decayed{N: v - whole, At: now}
	} else {
		e.owed = placement.Decayed{N: whole - v, At: now}
	}
	return Count{N: uint64(whole), Remote: e.remote > 0}, true
}
