package locality

import (
	"time"

	"errors"
	"fmt"
	"sync/atomic"

	"github.com/strata-cache/strata/internal/stall"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/handoff"
	"github.com/strata-cache/strata/tiers/locality/keyrule"
	"github.com/strata-cache/strata/tiers/locality/link"
	"github.com/strata-cache/strata/tiers/locality/linkproto"
	"github.com/strata-cache/strata/tiers/locality/loccache"
)

// Directory is the location service as the router consumes it
// (control/locality/locsvc implements it).
type Directory interface {
	// Resolve looks the μ-shard up off the request path and calls done
	// exactly once, on any goroutine. A μ-shard with no row is created
	// by the placement service with this strata's region as owner; Resolve
	// waits for the row. fresh bypasses every cache (after a wrong-owner
	// answer). An error means unknown now: the router answers as for an
	// unreachable owner.
	Resolve(name string, fresh bool, done func(loccache.Location, error))
	// Access records one request a client of this strata made for the
	// μ-shard; remote says another region served it. It must not block.
	Access(name string, remote bool)
	// Served records one request a peer region forwarded here for the
	// μ-shard, served here: the μ-shard is used from elsewhere too, so
	// this region's own count of it matters. It must not block.
	Served(name string)
	// Fenced reports whether this strata must not serve μ-shards from
	// its own tiers at now: its view may have missed a move (it lost the
	// control store). Such requests are answered as for an unreachable
	// owner; forwarded ones are not affected (the owner checks the
	// epoch). Asked on the request path: it must be cheap.
	Fenced(now time.Time) bool
}

// Updater is what the router offers the location service's watch: every
// row change it sees is applied to the cached views of every loop, and
// done runs after the last loop applied them (the service acknowledges
// the revision only then).
type Updater interface {
	Update(changes []Change, done func())
}

// Change is one location row change.
type Change = loccache.Change

// Links is the region-link client as the router consumes it
// (link.Client implements it).
type Links interface {
	// Peer is the index of region for Send, -1 if it is not a peer.
	Peer(region string) int
	// Send forwards op on op.Loop with tok; Done runs on that loop.
	Send(peer int, op *tiers.Op, tok linkproto.Token)
	// Stats are the link's counters (forwarded bytes).
	Stats() link.Stats
}

var (
	_ tiers.Tier = (*Tier)(nil)
	_ Updater    = (*Tier)(nil)
	_ Links      = (*link.Client)(nil)
)

// Deps are what the router routes between.
type Deps struct {
	// Inner is the local tiers (usually the L1/L2 layering).
	Inner tiers.Tier
	// Rules give keys their μ-shard; nil or empty routes nothing.
	Rules *keyrule.Rules
	// Directory resolves locations and takes the access counts.
	Directory Directory
	// Links reach the other regions; nil makes every other region
	// unreachable.
	Links Links
	// Loops resumes resolved requests on their own event loop and lets
	// Update reach every loop's cache (the proxy's loop handle). Required.
	Loops Executor
}

// Executor runs fn on event loop `loop`, later and asynchronously.
type Executor interface {
	Run(loop int, fn func())
}

// MaxLoops bounds Op.Loop (the proxy's own bound). A loop's state, and its
// location cache, is made on the first μ-shard request the loop serves.
const MaxLoops = 1024

// Errors the router answers with.
var (
	// ErrUnknownLocation: the location could not be resolved in time.
	ErrUnknownLocation = errors.New("locality: location unknown")
	// ErrLate: a link write arrived past its sender's deadline.
	ErrLate = errors.New("locality: link write arrived after its sender gave it up")
	// ErrNoLink: the serving region is not a configured peer.
	ErrNoLink = fmt.Errorf("%w: no link to the serving region", link.ErrUnreachable)
	// ErrFenced: this region serves the μ-shard, but this strata lost the
	// control store too long ago to trust its view (Directory.Fenced).
	ErrFenced = fmt.Errorf("%w: location view unconfirmed (control store lost)", link.ErrUnreachable)
)

// Tier routes μ-shard keys to the region that serves them; it wraps the
// local tiers. Do and Phase run on event loops; Update and Stats are safe
// from any goroutine.
type Tier struct {
	cfg      Config
	inner    tiers.Tier
	rules    *keyrule.Rules
	prefixes map[string]int // rule prefix → rule index, for Update's names
	dir      Directory
	links    Links
	loops    [MaxLoops]atomic.Pointer[loopState] // made by their own loop, read by Update and Stats
	exec     Executor
	spare    atomic.Pointer[loccache.Cache] // made by New, taken by the first loop
	settle   settleSet                      // μ-shards that just settled here (settle.go)
	// stall is the process's stall detector: a task's write to the local
	// tiers is checked against it (Tier.local).
	stall *stall.Detector

	maxTTL int64 // seconds
	lease  int64 // seconds

	ctr counters
}

// counters are shared by the loops: each is one atomic add per request,
// on a path that already costs a cache lookup.
type counters struct {
	local, forwarded, wrongOwner, unreachable, refused atomic.Uint64
	linkServed, late                                   atomic.Uint64
	fills, fillsLost, otherFailed                      atomic.Uint64
}

// Stats are the router's counters since New.
type Stats struct {
	// Local: this strata's client requests served by the local tiers as
	// the serving region. Forwarded: client requests sent to the serving
	// region, counted per send (a retry after a refusal counts again; a
	// send that fails counts in OwnerUnreachable as well).
	Local, Forwarded uint64
	// LinkServed: requests other regions forwarded here and the local
	// tiers served (source reads and deletes not included).
	LinkServed uint64
	// WrongOwner: refusals received from a region that did not serve
	// the μ-shard (each is followed by one fresh read and one retry).
	WrongOwner uint64
	// OwnerUnreachable: requests whose serving region or location could
	// not be reached (reads answered a miss, writes SERVER_ERROR).
	OwnerUnreachable uint64
	// Refused: link requests this region refused as not serving.
	Refused uint64
	// Late: link writes refused because they arrived past the deadline
	// their sender answered them as failed at (ErrLate).
	Late uint64
	// CacheHits and CacheMisses: the location caches' lookups.
	CacheHits, CacheMisses uint64
	// Fills: misses at a migration's destination filled from the source;
	// FillsLost: fills dropped because a write or the state won.
	// OtherFailed: writes answered SERVER_ERROR because the delete at the
	// migration's other side failed.
	Fills, FillsLost, OtherFailed uint64
	// ForwardedBytes: bytes written to and read from region links.
	ForwardedBytes uint64
}

// New builds the router.
func New(cfg Config, d Deps) (*Tier, error) {
	if d.Inner == nil || d.Directory == nil {
		return nil, errors.New("locality: an inner tier and a directory are required")
	}
	if d.Loops == nil {
		return nil, errors.New("locality: an executor (the event loops) is required")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if d.Rules == nil {
		r, err := keyrule.New(keyrule.Config{})
		if err != nil {
			return nil, err
		}
		d.Rules = r
	}
	t := &Tier{cfg: cfg, inner: d.Inner, rules: d.Rules, dir: d.Directory, links: d.Links, exec: d.Loops, stall: stall.Process(),
		prefixes: map[string]int{}, maxTTL: int64(cfg.MaxTTL.Seconds()), lease: int64(cfg.FillLease.Seconds())}
	for i := 0; i < d.Rules.Len(); i++ {
		t.prefixes[d.Rules.Rule(i).Prefix] = i
	}
	// The first loop's cache, made now so that a bad cache config fails
	// New rather than a request.
	c, err := loccache.New(cfg.Cache)
	if err != nil {
		return nil, err
	}
	t.spare.Store(c)
	return t, nil
}

// runOn runs fn on loop, through the executor New took: resolved
// locations resume their requests with it, and Update reaches every
// loop's cache.
func (t *Tier) runOn(loop int, fn func()) { t.exec.Run(loop, fn) }

// Do routes op. A key with no μ-shard, a flush_all and a source request
// go to the inner tier unchanged; the others by their location.
func (t *Tier) Do(op *tiers.Op) {
	r := &op.Req
	if r.Kind == tiers.KindFlush {
		t.inner.Do(op)
		return
	}
	id := t.rules.Match(r.Key)
	if !id.Ok() {
		t.inner.Do(op)
		return
	}
	if r.LinkSource {
		// The other side of a migration reads or deletes: no ownership
		// check, or a region could never read its own source.
		t.inner.Do(op)
		return
	}
	if op.Loop < 0 || op.Loop >= MaxLoops {
		fail(op, fmt.Errorf("locality: event loop %d out of range", op.Loop))
		return
	}
	ls := t.loops[op.Loop].Load()
	if ls == nil {
		ls = t.newLoop(op.Loop)
	}
	t.clamp(r)
	h := t.rules.Hash(id)
	loc, ok := ls.cache.Get(h, id)
	if ok && !r.Link && loc.State == loccache.Stable && loc.Owner == t.cfg.Region && t.settle.open.Load() == 0 &&
		!t.dir.Fenced(t.cfg.Now()) {
		// The steady local path: no task, no allocation.
		t.ctr.local.Add(1)
		t.dir.Access(ls.names.get(t.rules, h, id), false)
		t.inner.Do(op)
		return
	}
	tk := ls.task(t)
	tk.start(op, id, h)
	if !ok {
		tk.resolve(false)
		return
	}
	tk.route(loc)
}

// newLoop makes the state of loop i, on loop i (so only one goroutine can
// be making it).
func (t *Tier) newLoop(i int) *loopState {
	c := t.spare.Swap(nil)
	if c == nil {
		var err error
		if c, err = loccache.New(t.cfg.Cache); err != nil {
			panic(err) // New made one with this config
		}
	}
	ls := &loopState{idx: i, cache: c, pending: map[string]*resolving{}}
	t.loops[i].Store(ls)
	return ls
}

// clamp bounds the TTLs a μ-shard write sets to MaxTTL.
func (t *Tier) clamp(r *tiers.Request) {
	if r.Kind == tiers.KindSet || r.HasTTL {
		r.TTL = t.clampTTL(r.TTL)
	}
	if r.Vivify {
		r.VivifyTTL = t.clampTTL(r.VivifyTTL)
	}
}

func (t *Tier) clampTTL(ttl int64) int64 {
	var now int64
	if ttl > handoff.MaxRelativeTTL {
		now = t.cfg.Now().Unix()
	}
	return clampTTL(ttl, t.maxTTL, now)
}

// Phase orders requests within one client connection. Keys with no
// μ-shard take the inner tier's phase. A μ-shard key may be served here
// or in another region, and the route can change between two requests of
// one connection (a migration), so neither path keeps their order: a
// write forwarded before a write served here could land after it. The
// route is not known here (it is the loop's cached view, and Phase has no
// loop), so the phase is chosen by kind alone: a μ-shard write is
// exclusive (nothing else of its key in flight on the connection), and
// reads take the inner tier's read phase (1 without one), so they go out
// together and never with a write.
func (t *Tier) Phase(r *tiers.Request) uint8 {
	if r.Kind == tiers.KindFlush || r.LinkSource {
		return t.inner.Phase(r)
	}
	if !t.rules.Match(r.Key).Ok() {
		return t.inner.Phase(r)
	}
	if !r.IsRead() {
		return tiers.PhaseExclusive
	}
	if p := t.inner.Phase(r); p != 0 {
		return p
	}
	return 1
}

// Update applies row changes to the cached views of every loop that has
// served a μ-shard request (a loop that never did has no cache yet, and
// its first lookup reads the service) and calls done after the last.
func (t *Tier) Update(changes []Change, done func()) {
	type change struct {
		h       uint64
		id      keyrule.ID
		loc     loccache.Location
		deleted bool
	}
	// A copy: the loops apply it later, and the caller may reuse changes.
	cs := make([]change, 0, len(changes))
	for _, c := range changes {
		prefix, field, ok := keyrule.SplitName(c.Name)
		rule, known := t.prefixes[prefix]
		if !ok || !known {
			continue // a name no rule of ours gives: never cached
		}
		id := keyrule.ID{Rule: rule, Field: []byte(field)}
		cs = append(cs, change{h: t.rules.Hash(id), id: id, loc: c.Loc, deleted: c.Deleted})
		if !c.Deleted {
			t.observe(c.Name, c.Loc)
		}
	}
	var active []*loopState
	for i := range t.loops {
		if ls := t.loops[i].Load(); ls != nil {
			active = append(active, ls)
		}
	}
	if len(cs) == 0 || len(active) == 0 {
		done()
		return
	}
	var left atomic.Int32
	left.Store(int32(len(active)))
	for _, ls := range active {
		t.runOn(ls.idx, func() {
			for _, c := range cs {
				ls.cache.Refresh(c.h, c.id, c.loc, c.deleted)
			}
			if left.Add(-1) == 0 {
				done()
			}
		})
	}
}

// Stats sums the counters.
func (t *Tier) Stats() Stats {
	s := Stats{
		Local: t.ctr.local.Load(), Forwarded: t.ctr.forwarded.Load(), LinkServed: t.ctr.linkServed.Load(),
		WrongOwner:       t.ctr.wrongOwner.Load(),
		OwnerUnreachable: t.ctr.unreachable.Load(), Refused: t.ctr.refused.Load(), Late: t.ctr.late.Load(),
		Fills: t.ctr.fills.Load(), FillsLost: t.ctr.fillsLost.Load(), OtherFailed: t.ctr.otherFailed.Load(),
	}
	for i := range t.loops {
		ls := t.loops[i].Load()
		if ls == nil {
			continue
		}
		cs := ls.cache.Stats()
		s.CacheHits += cs.Hits
		s.CacheMisses += cs.Misses
	}
	if t.links != nil {
		ls := t.links.Stats()
		s.ForwardedBytes = ls.BytesOut + ls.BytesIn
	}
	return s
}

// fail completes op with an error.
func fail(op *tiers.Op, err error) {
	op.Res.Reset()
	op.Res.Status, op.Res.Err = tiers.StatusError, err
	op.Done(op)
}
