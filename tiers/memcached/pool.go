package memcached

import (
	"context"
	"crypto/tls"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-cache/strata/internal/stall"
	"github.com/strata-cache/strata/internal/tlsconn"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/handoff"
	"github.com/strata-cache/strata/tiers/internal/tickclock"
	"github.com/strata-cache/strata/tiers/memcached/compat"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// Pool is a tier on a pool of memcached servers. Do and FlushLoop run on
// event loops; every other method is safe for concurrent use from any
// goroutine.
type Pool struct {
	cfg  Config
	tick time.Duration
	tls  atomic.Pointer[tls.Config] // Config.TLS's files, read by New and ReloadTLS; nil for plaintext (tls.go)
	// handshakes counts the TLS handshakes with the servers.
	handshakes tlsconn.Counts

	// route is the shard map and the servers it names. Requests read it
	// with one atomic load; changes replace it whole.
	route atomic.Pointer[route]

	mu         sync.Mutex         // guards byAddr, members, closedLock, incs, flushed, and serialises Start, Close and route changes
	byAddr     map[string]*server // every server with connections: members ∪ the topology's members
	members    []Server           // the configured list (Config.Servers, then SetServers)
	layout     *compat.Layout     // the compat layout of members, nil without Config.Compat
	prior      *compat.Layout     // Config.ConvertFrom's layout, nil without it; set by New
	closedLock bool
	incs       map[string]uint64 // the newest incarnation seen of each address (reentry.go)
	flushed    map[string]uint64 // the newest incarnation flushed of each address

	loops Loops // from New; joined there, so it starts and flushes the pool

	// Set once by Start, before started is stored; read-only afterwards.
	lstates []*loopState
	started atomic.Bool
	closed  atomic.Bool

	moves moveCounters
	// The handoff rules of moves and of read replicas (move.go), set by New.
	moveRules, replicaRules handoff.Rules

	epoch  time.Time
	clock  *tickclock.Clock  // milliseconds, advanced by the ticker while it ticks
	ticker *tickclock.Ticker // sleeps while every loop is quiet; the loops wake it

	// stall is the process's stall detector (stall.go), held from Start
	// to Close; release ends that hold.
	stall   *stall.Detector
	release func()

	ctx    context.Context // ends at Close: stops the ticker, dials and probes
	cancel context.CancelFunc
	wg     sync.WaitGroup // the ticker, dial and probe goroutines
}

var _ tiers.Tier = (*Pool)(nil)

// Phase is 0: the requests of one client connection for one key go to one
// server over the one connection their loop has to it, and memcached
// answers in order, so the pool keeps their order by itself.
func (*Pool) Phase(*tiers.Request) uint8 { return 0 }

// loopState is the part of the pool that one event loop owns; only that
// loop's goroutine touches it.
type loopState struct {
	idx      int
	dirty    []*bconn       // connections with requests to write
	spare    []*bconn       // the other buffer of dirty, swapped by FlushLoop
	flushing bool           // inside flushDirty: a nested call leaves the work to it
	draining []*bconn       // connections of removed servers still awaiting replies
	check    func()         // the timeout check, bound once
	shutdown func()         // Close's cleanup, bound once
	load     []shardCounter // per shard, sized Config.Shards at Start
	spread   uint32         // round-robin position of reads over replicas (replica.go)
	stallGen uint64         // the stall generation as of the loop's newest flush round (stall.go)
	batch    opBatch        // the requests Do holds back (batch.go)
	// waiting: some request may wait for a reply on this loop, or a
	// connection wait out a backoff on the pool clock. The loop sets it
	// when it queues one and clears it in a check that finds every queue
	// empty and no backoff running; the ticker reads it to leave a quiet
	// loop asleep, and sleeps itself when every loop is quiet.
	waiting atomic.Bool
	ticker  *tickclock.Ticker // the pool's
}

// noteWaiting marks the loop as having a request to time; one load per
// request, a store and a wake of the ticker only on the first after a
// quiet check.
func (ls *loopState) noteWaiting() {
	if !ls.waiting.Load() {
		ls.waiting.Store(true)
		ls.ticker.Wake()
	}
}

// needsCheck is the ticker's rule: a loop is checked while it may hold a
// request to time out, and every loop while some server is not up (its
// connections must be fenced).
func needsCheck(waiting, allUp bool) bool { return waiting || !allUp }

// New builds a pool on loops and joins it (Loops.Join), so that whoever
// serves the loops starts the pool and flushes it; loops is required. It
// does not connect: connections are dialled on demand, once started.
func New(cfg Config, loops Loops) (*Pool, error) {
	if loops == nil {
		return nil, errors.New("memcached: the event loops are required")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	p := &Pool{cfg: cfg, tick: tickFor(cfg.RequestTimeout), byAddr: map[string]*server{}, members: cfg.Servers, epoch: time.Now(), loops: loops, stall: stall.Process()}
	tc, err := cfg.TLS.Load()
	if err != nil {
		return nil, err
	}
	p.tls.Store(tc)
	// A stop of the process counts as at most half a request timeout
	// (tickclock's doc says why).
	p.clock = tickclock.New(p.epoch, max(cfg.RequestTimeout/2, p.tick))
	p.ticker = tickclock.NewTicker(p.clock, p.tick)
	m, err := shardmap.Rendezvous(p.mapSeed(), cfg.Shards, mapServers(cfg.Servers))
	if err != nil {
		return nil, err
	}
	if p.layout, err = cfg.compatLayout(cfg.Servers); err != nil {
		return nil, err
	}
	if p.prior, err = cfg.priorLayout(); err != nil {
		return nil, err
	}
	p.moveRules, p.replicaRules = handoffRules(cfg)
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.installLocked(shardmap.Topology{Map: m}) // nothing else can hold p yet
	if err := loops.Join(p); err != nil {
		p.cancel()
		return nil, err
	}
	return p, nil
}

var _ User = (*Pool)(nil)

// mapSeed seeds the rendezvous scores; it is derived from the router seed
// so that pools configured alike agree.
func (p *Pool) mapSeed() uint64 { return p.cfg.Seed ^ 0x9e37_79b9_7f4a_7c15 }

// Start sizes the pool's per-loop state and starts its ticker. The Loops
// it joined call it once they serve (User). Later calls do nothing.
func (p *Pool) Start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started.Load() || p.closedLock {
		return
	}
	n := max(p.loops.NumLoops(), 1)
	p.lstates = make([]*loopState, n)
	p.release = p.stall.Hold()
	gen := p.stall.Gen(stall.Now())
	for i := range p.lstates {
		ls := &loopState{idx: i, load: make([]shardCounter, p.cfg.Shards), stallGen: gen, ticker: p.ticker}
		ls.check = func() { p.checkLoop(ls) }
		ls.shutdown = func() { p.shutdownLoop(ls) }
		p.lstates[i] = ls
	}
	for _, s := range p.byAddr {
		p.attachConns(s)
	}
	p.started.Store(true)
	p.wg.Add(1)
	go p.runTicker()
}

// attachConns gives s one connection state per event loop. It runs before
// s is reachable from any loop.
func (p *Pool) attachConns(s *server) {
	s.conns = make([]*bconn, len(p.lstates))
	for i, ls := range p.lstates {
		s.conns[i] = &bconn{p: p, srv: s, ls: ls}
	}
}

// Do sends op to the server that owns its key's shard (flush_all to every
// server). Done is called on op.Loop's event loop: later, when the reply
// arrives, or before Do returns when the request fails at once (a request
// Do holds back for a batch fails when the batch is sent: batch.go).
func (p *Pool) Do(op *tiers.Op) {
	if !p.started.Load() {
		complete(op, tiers.StatusError, ErrNotStarted)
		return
	}
	if op.Loop < 0 || op.Loop >= len(p.lstates) {
		complete(op, tiers.StatusError, ErrBadLoop)
		return
	}
	if p.closed.Load() {
		complete(op, tiers.StatusError, ErrClosed)
		return
	}
	ls := p.lstates[op.Loop]
	switch op.Req.Kind {
	case tiers.KindFlush:
		p.sendBatch(ls)
		p.flushAll(op)
		return
	case tiers.KindSet:
		if len(op.Req.Value) > p.cfg.MaxItemSize {
			complete(op, tiers.StatusTooLarge, nil)
			return
		}
	}
	rt := p.route.Load()
	shard := shardmap.Shard(p.cfg.Seed, op.Req.Key, rt.m.Shards())
	ls.countRequest(shard, len(op.Req.Key)+len(op.Req.Value), !op.Req.IsWrite())
	if p.hold(ls, rt, op, shard) {
		return
	}
	p.sendBatch(ls) // what Do held goes first (batch.go)
	if mv := rt.m.Move(shard); mv.Phase != shardmap.MoveNone && p.doMove(rt, op, shard, mv) {
		return
	}
	if reps := rt.m.Replicas(shard); reps != nil && rt.prior == nil && p.doReplicated(rt, op, shard, reps) {
		return
	}
	p.send(ls, rt, op, shard, rt.serverFor(op.Req.Key, shard))
}

// send submits op to s, the server rt names for it, or fails it at once if
// s is down (unless RehashOnDown finds another).
func (p *Pool) send(ls *loopState, rt *route, op *tiers.Op, shard int, s *server) {
	if healthState(s.state.Load()) != stateUp {
		alt := (*server)(nil)
		if p.cfg.RehashOnDown {
			alt = rt.fallback(p.mapSeed(), shard)
		}
		if alt == nil {
			bc := s.conns[ls.idx]
			bc.ctr.requests.Add(1)
			bc.ctr.downRejects.Add(1)
			bc.ctr.errors.Add(1)
			complete(op, tiers.StatusError, s.errDown)
			return
		}
		s = alt
	}
	s.conns[ls.idx].submit(op, nil, int32(shard))
}

// FlushLoop sends the requests Do held back on loop (batch.go), then
// writes every backend connection of loop that has requests pending,
// once. The proxy calls it once per round of the event loop, after the
// I/O events of the round (not after each callback), so the requests of
// every client served in the round leave in one write per backend
// connection: a write to a TCP socket is the most expensive thing a proxy
// does, and batching them cut the CPU per request by about a third.
func (p *Pool) FlushLoop(loop int) {
	if !p.started.Load() || loop < 0 || loop >= len(p.lstates) {
		return
	}
	ls := p.lstates[loop]
	p.sendBatch(ls)
	p.seeStall(ls)
	if len(ls.dirty) == 0 {
		return
	}
	p.flushDirty(ls)
}

// Batched reports whether a flush round on loop (FlushLoop) would do
// anything: send the requests Do held back (batch.go), write a request
// batched since the last one, or move the
// loop's view of the stall generation (stall.go). The loops' owner may
// skip a round for which it is false: at depth 1, every reply that only
// completes a client's request ends such a callback, and scheduling its
// round costs a wake-up of the loop. It runs on the loop.
func (p *Pool) Batched(loop int) bool {
	if !p.started.Load() || loop < 0 || loop >= len(p.lstates) {
		return false
	}
	ls := p.lstates[loop]
	return len(ls.dirty) > 0 || ls.batch.n > 0 || p.stall.Gen(stall.Now()) != ls.stallGen
}

// flushDirty writes every dirty connection of ls once.
func (p *Pool) flushDirty(ls *loopState) {
	if ls.flushing {
		return // a write failure re-entered us; the outer call loops until nothing is dirty
	}
	ls.flushing = true
	for len(ls.dirty) > 0 {
		batch := ls.dirty
		ls.dirty = ls.spare[:0]
		for i, bc := range batch {
			batch[i] = nil
			bc.flush()
		}
		ls.spare = batch[:0]
	}
	ls.flushing = false
}

// complete finishes op with a status decided without a reply.
func complete(op *tiers.Op, st tiers.Status, err error) {
	op.Res.Reset()
	op.Res.Status = st
	op.Res.Err = err
	if op.Done != nil {
		op.Done(op)
	}
}

// fanout is a flush_all in flight to every server of the pool. It lives on
// the loop of its Op.
type fanout struct {
	op   *tiers.Op
	left int
	err  error // the first failure
}

func (f *fanout) done(err error) {
	if err != nil && f.err == nil {
		f.err = err
	}
	f.left--
	if f.left > 0 {
		return
	}
	if f.err != nil {
		complete(f.op, tiers.StatusError, f.err)
	} else {
		complete(f.op, tiers.StatusStored, nil)
	}
}

// flushAll sends flush_all to every server; the Op completes when all
// have answered, with the first failure if any.
func (p *Pool) flushAll(op *tiers.Op) {
	rt := p.route.Load()
	f := &fanout{op: op, left: len(rt.all)}
	for _, s := range rt.all {
		if healthState(s.state.Load()) != stateUp {
			f.done(s.errDown)
			continue
		}
		s.conns[op.Loop].submit(nil, f, -1)
	}
}

// now is the clock of the health machines, in nanoseconds.
func (p *Pool) now() int64 { return int64(time.Since(p.epoch)) }

// runTicker runs the timeout check on each tick of the pool clock, on
// every loop that needs it (needsCheck); with none, the ticker sleeps
// until a loop queues a request (noteWaiting), and no backoff runs on the
// clock meanwhile (checkLoop), so an idle pool does not wake every tick.
func (p *Pool) runTicker() {
	defer p.wg.Done()
	p.ticker.Run(p.ctx, func() bool {
		allUp := p.allUp()
		checked := false
		for i, ls := range p.lstates {
			if needsCheck(ls.waiting.Load(), allUp) {
				p.loops.Run(i, ls.check)
				checked = true
			}
		}
		return checked
	})
}

// allUp reports whether every server of the route is up.
func (p *Pool) allUp() bool {
	for _, s := range p.route.Load().all {
		if healthState(s.state.Load()) != stateUp {
			return false
		}
	}
	return true
}

// expired is the timeout rule: a request issued at `issued` has waited too
// long at `now` (both pool clock milliseconds).
func expired(issued, now, limit int64) bool { return now-issued > limit }

// checkLoop fails the requests that waited longer than RequestTimeout on
// this loop's connections.
func (p *Pool) checkLoop(ls *loopState) {
	now := p.clock.Load()
	limit := p.cfg.RequestTimeout.Milliseconds()
	quiet := len(ls.draining) == 0
	for _, s := range p.route.Load().all {
		bc := s.conns[ls.idx]
		if healthState(s.state.Load()) != stateUp {
			bc.fence(s.downGen.Load())
		}
		bc.checkTimeout(now, limit)
		// The backlog is empty whenever q is. A backoff ends on the pool
		// clock, which stops while the loops are quiet.
		quiet = quiet && bc.q.Len() == 0 && !tickclock.BackingOff(bc.state == stateBackoff, bc.retryAt, now)
	}
	if quiet {
		ls.waiting.Store(false)
	}
	keep := ls.draining[:0]
	for _, bc := range ls.draining {
		bc.checkTimeout(now, limit)
		if bc.q.Len() > 0 || bc.state == stateDialing {
			keep = append(keep, bc)
		} else {
			bc.closeConn()
		}
	}
	clear(ls.draining[len(keep):])
	ls.draining = keep
}

// Close stops the pool: later requests fail with ErrClosed, the ticker,
// dials and probes stop, and each live loop is asked to fail what still
// waits and close its connections. It is idempotent, and bounded: it waits
// only for the pool's own goroutines, which stop at once.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closedLock {
		p.mu.Unlock()
		return nil
	}
	p.closedLock = true
	p.closed.Store(true)
	p.cancel()
	started := p.started.Load()
	p.mu.Unlock()
	if started {
		for i, ls := range p.lstates {
			p.loops.Run(i, ls.shutdown)
		}
		p.release()
	}
	p.wg.Wait()
	return nil
}

// shutdownLoop runs on a loop after Close.
func (p *Pool) shutdownLoop(ls *loopState) {
	p.sendBatch(ls) // into connections aborted below
	p.mu.Lock()
	servers := make([]*server, 0, len(p.byAddr))
	for _, s := range p.byAddr {
		servers = append(servers, s)
	}
	p.mu.Unlock()
	for _, s := range servers {
		s.conns[ls.idx].abort(ErrClosed)
	}
	for _, bc := range ls.draining {
		bc.abort(ErrClosed)
	}
	ls.draining = nil
}

// goroutine starts fn on a goroutine the pool owns, unless the pool is
// closed. It reports whether fn was started.
func (p *Pool) goroutine(fn func()) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closedLock {
		return false
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		fn()
	}()
	return true
}
