package locsvc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-cache/strata/control/locality/loctable"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/tiers/locality/loccache"
)

// Defaults of Config.
const (
	DefaultReadTimeout     = time.Second
	DefaultCreateTimeout   = 5 * time.Second
	DefaultCounterInterval = time.Second
	DefaultSessionTTL      = 5
	DefaultCacheCapacity   = 1 << 16
	DefaultUpdateBatch     = 4096
	DefaultAckInterval     = 50 * time.Millisecond
	DefaultLocalEvery      = 5
	DefaultCapacityEvery   = 10
)

// Config configures a Service.
type Config struct {
	// Region is this strata's region: the owner it asks for when it sees a
	// μ-shard first, and the region of its counter batches. Required.
	Region string
	// Member names this process among the strata (its ack and counter
	// rows). Required, unique per process, without '/'.
	Member string
	// Prefix is the locality prefix in the store (loctable.DefaultPrefix).
	Prefix string
	// ReadTimeout bounds one read of a row. Default 1s. While the store
	// failed a read less than ReadTimeout ago, Resolve of a name it has
	// not cached fails at once (one probe read per ReadTimeout goes out).
	ReadTimeout time.Duration
	// CreateTimeout bounds how long Resolve waits for the placement
	// service to create a new μ-shard's row. Default 5s.
	CreateTimeout time.Duration
	// CounterInterval is how often access counts are shipped. Default 1s.
	CounterInterval time.Duration
	// LocalEvery: a μ-shard a peer region forwarded a request for ships
	// its local count for LocalEvery intervals after that request (see
	// Tally); other μ-shards used only locally never ship, their counts
	// aging here. Default 5.
	LocalEvery int
	// HalfLife is the decay of the counts not shipped yet: the placement
	// policy's half_life, so a count shipped late weighs what it would
	// have weighed shipped at once. Default placement.DefaultHalfLife.
	HalfLife time.Duration
	// SessionTTL is the lease of the ack and counter rows, in seconds: a
	// dead strata stops holding migrations up this long after it died.
	// Default 5.
	SessionTTL int
	// CacheCapacity bounds the service's shared cache of rows (shared by
	// the loops, whose own caches miss first). Default 65536.
	CacheCapacity int
	// UpdateBatch is the most changes one Updater.Update carries. Default
	// 4096.
	UpdateBatch int
	// AckInterval is the least time between two ack writes: a move waits
	// up to this long more for this strata's ack. Default 50ms.
	AckInterval time.Duration
	// Capacity measures this strata's region's cache memory: bytes in
	// use and the size (memcached's bytes and limit_maxbytes over the
	// L2 pool); ok false when it knows nothing now. It is called once
	// per CounterInterval, off the request path. nil: no capacity row.
	Capacity func() (used, limit uint64, ok bool)
	// CapacityEvery: the capacity row is written when the measurement
	// changed, and at least every CapacityEvery intervals so its time
	// stays fresh. The placement service must accept reports this old
	// (with room for a late one). Default 10.
	CapacityEvery int
	// FenceAfter bounds how long this strata serves μ-shards from its own
	// region's tiers on a view it cannot confirm: once its membership (the
	// ack row on its live lease) was last confirmed FenceAfter ago, those
	// requests are refused (Fenced) until it has joined again and applied
	// every row change up to its joining. The placement service waits as
	// long after a member's lease ends before it stops waiting for that
	// member, so a strata cut off from the store alone never serves a
	// μ-shard that moved away meanwhile. Forwarded requests are not
	// fenced: the serving region checks the epoch. It must be the same in
	// every strata and in the placement service. 0: never fenced (a
	// strata cut off from the store alone may then read stale values
	// after a move away from its region).
	FenceAfter time.Duration
	Logger     *slog.Logger
	// Now is the clock of counter batches. Default time.Now.
	Now func() time.Time
}

// Store is what the service needs of the control store.
type Store interface {
	store.Reader
	store.Writer
	store.Watcher
	store.Sessions
}

// Updater receives every location row change the service sees, and calls
// done once every event loop applied them (tiers/locality's router
// implements it; cmd/strata connects the two).
type Updater interface {
	Update(changes []loccache.Change, done func())
}

// Errors of Resolve.
var (
	// ErrNotReady: the service has not read the store's revision yet (just
	// started, or the store was down since).
	ErrNotReady = errors.New("locsvc: location service not ready")
	// ErrStoreDown: the store failed a read less than ReadTimeout ago.
	ErrStoreDown = errors.New("locsvc: control store unreachable")
	// ErrCreateTimeout: no row appeared within CreateTimeout of asking
	// the placement service for one (is one running?).
	ErrCreateTimeout = errors.New("locsvc: μ-shard not created in time")
)

// Stats are the service's counters since New; safe from any goroutine.
type Stats struct {
	// Resolves: calls of Resolve; CacheHits: answered from the shared
	// cache; Reads: reads of the store (coalesced); Creates: create
	// requests written; Errors: Resolves answered with an error.
	Resolves, CacheHits, Reads, Creates, Errors uint64
	// Applied is the rows revision every loop applied (acknowledged).
	Applied int64
	// CounterBytes is the key and value bytes of counter batches written;
	// CounterBatches the chunks written.
	CounterBytes, CounterBatches uint64
	// CapacityWrites: capacity rows written.
	CapacityWrites uint64
}

// Service is one strata's location service: the Directory of the router
// (Resolve and Access) and the watch that keeps the routers' caches
// current. See the package doc for the data flow.
type Service struct {
	cfg    Config
	st     Store
	table  *loctable.Table
	layout Layout

	mu sync.Mutex // guards the fields below
	// cache is the shared cache: rows read or watched, by name.
	// Invariant: an entry is never replaced by an older view (Before).
	cache map[string]loccache.Location
	// flights are the reads in progress, one per name.
	flights map[string]*flight
	// ready: the watch knows its start revision; Resolve may read.
	ready bool
	// down: the last read failed. No read goes out before downUntil;
	// after it, one at a time (probing) until one succeeds.
	down      bool
	downUntil time.Time
	probing   bool
	closed    bool
	out       deliveries

	counters counterShards
	capacity capacityReporter // owned by shipLoop

	resolves, hits, reads, creates, errs atomic.Uint64
	applied                              atomic.Int64
	// servingUntil (Unix ns) is when Fenced starts to say yes: the last
	// confirmation of the membership plus FenceAfter, or 0 while the
	// rows up to the joining are not applied yet (acker).
	servingUntil                 atomic.Int64
	counterBytes, counterBatches atomic.Uint64
	capacityWrites               atomic.Uint64

	startOnce, stopOnce sync.Once
	ctx                 context.Context
	cancel              context.CancelFunc
	wg                  sync.WaitGroup
}

// New returns a service; Start runs it.
func New(cfg Config, st Store) (*Service, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Service{
		cfg: cfg, st: st, table: loctable.New(st, cfg.Prefix), layout: NewLayout(cfg.Prefix),
		cache: make(map[string]loccache.Location), flights: make(map[string]*flight),
		ctx: ctx, cancel: cancel,
	}
	s.out.init()
	s.counters.init(cfg)
	return s, nil
}

// Start runs the watch (feeding u, which may be nil when this process
// routes nothing), the acknowledgements, the deliveries of Resolve's
// answers and the counter shipments, until Stop.
func (s *Service) Start(u Updater) {
	s.startOnce.Do(func() {
		acks := newAcker(s)
		s.wg.Add(4)
		go func() { defer s.wg.Done(); s.out.run(s.ctx) }()
		go func() { defer s.wg.Done(); s.watchLoop(u, acks) }()
		go func() { defer s.wg.Done(); acks.run(s.ctx) }()
		go func() { defer s.wg.Done(); s.shipLoop() }()
	})
}

// Stop ends the service's goroutines, bounded by ctx, and answers the
// Resolves still waiting with an error. Idempotent.
func (s *Service) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.cancel()
	})
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.out.drain() // answers queued after the delivery loop ended
	return nil
}

// Stats returns the counters.
func (s *Service) Stats() Stats {
	return Stats{
		Resolves: s.resolves.Load(), CacheHits: s.hits.Load(), Reads: s.reads.Load(),
		Creates: s.creates.Load(), Errors: s.errs.Load(), Applied: s.applied.Load(),
		CounterBytes: s.counterBytes.Load(), CounterBatches: s.counterBatches.Load(),
		CapacityWrites: s.capacityWrites.Load(),
	}
}

// Fenced reports whether, at now, this strata must not serve μ-shards
// from its own region's tiers (Config.FenceAfter). One atomic load: the
// router asks on the request path. Always false without FenceAfter.
func (s *Service) Fenced(now time.Time) bool {
	return s.cfg.FenceAfter > 0 && now.UnixNano() >= s.servingUntil.Load()
}

// Ready reports whether the watch has started, so Resolve may read (the
// admin API's /readyz can wait for it).
func (s *Service) Ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ready
}

// Layout is where the service keeps its rows.
func (s *Service) Layout() Layout { return s.layout }

// Table is the location table the service reads.
func (s *Service) Table() *loctable.Table { return s.table }

// flight is the read of one name's row in progress, and who waits for it.
type flight struct {
	// waiting: Resolves that no read has covered yet (they arrived while
	// none was under way, or asked fresh during one).
	waiting []func(loccache.Location, error)
	// inRead: Resolves the read under way answers.
	inRead  []func(loccache.Location, error)
	reading bool
	// seen is the newest view the watch delivered while the flight lasted.
	seen   loccache.Location
	seenOK bool
	// appeared is signalled when the watch delivers a row for the name.
	appeared chan struct{}
}

// Resolve implements the router's Directory: it answers name's location
// through done, exactly once, on the service's delivery goroutine (never
// before Resolve returns). Concurrent Resolves of one name share one read;
// fresh=true skips the shared cache and joins only a read that starts
// after it. A name without a row is created through the placement
// service (create/<name>, owner = this region) and Resolve waits for the
// row up to CreateTimeout.
//
// Ordering: answers and Updater.Update calls are delivered in one order,
// the order in which the service learnt them, so a router that applies
// them on its loops in call order never caches an answer older than an
// update it already applied.
func (s *Service) Resolve(name string, fresh bool, done func(loccache.Location, error)) {
	s.resolves.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		s.answerLocked(done, loccache.Location{}, store.ErrClosed)
		return
	}
	if !fresh {
		if loc, ok := s.cache[name]; ok {
			s.hits.Add(1)
			s.answerLocked(done, loc, nil)
			return
		}
	}
	if f := s.flights[name]; f != nil {
		if f.reading && !fresh {
			f.inRead = append(f.inRead, done)
		} else {
			f.waiting = append(f.waiting, done)
		}
		return
	}
	if err := s.admitLocked(); err != nil {
		s.answerLocked(done, loccache.Location{}, err)
		return
	}
	f := &flight{waiting: []func(loccache.Location, error){done}, appeared: make(chan struct{}, 1)}
	s.flights[name] = f
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.fly(name, f) }()
}

// admitLocked decides whether a read may go out now.
func (s *Service) admitLocked() error {
	if !s.ready {
		return ErrNotReady
	}
	if s.down {
		if s.probing || time.Now().Before(s.downUntil) {
			return ErrStoreDown
		}
		s.probing = true
	}
	return nil
}

func (s *Service) answerLocked(done func(loccache.Location, error), loc loccache.Location, err error) {
	if err != nil {
		s.errs.Add(1)
	}
	s.out.push(func() { done(loc, err) })
}

// fly reads name until no Resolve waits for a read any more. Resolve
// admitted its first read; every further round is admitted here, so a
// store that just failed is not read again at once.
func (s *Service) fly(name string, f *flight) {
	s.mu.Lock()
	for len(f.waiting) > 0 {
		f.inRead, f.waiting, f.reading = append(f.inRead, f.waiting...), nil, true
		s.mu.Unlock()

		loc, err := s.lookup(name, f)

		s.mu.Lock()
		f.reading = false
		s.noteReadLocked(err)
		switch {
		case err == nil:
			if f.seenOK && loc.Before(f.seen) {
				loc = f.seen
			}
			s.cachePutLocked(name, loc)
		case f.seenOK: // the watch answered while the read failed
			loc, err = f.seen, nil
			s.cachePutLocked(name, loc)
		}
		for _, done := range f.inRead {
			s.answerLocked(done, loc, err)
		}
		f.inRead = nil
		if len(f.waiting) > 0 {
			if err := s.admitLocked(); err != nil {
				for _, done := range f.waiting {
					s.answerLocked(done, loccache.Location{}, err)
				}
				f.waiting = nil
			}
		}
	}
	delete(s.flights, name)
	s.mu.Unlock()
}

// noteReadLocked keeps the store's health from the outcome of a read.
func (s *Service) noteReadLocked(err error) {
	s.probing = false
	switch {
	case err == nil, errors.Is(err, ErrCreateTimeout):
		s.down = false
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		s.down, s.downUntil = true, time.Now().Add(s.cfg.ReadTimeout)
	}
}

// lookup reads name's row; without one it asks for its creation and waits
// for the watch to deliver it.
func (s *Service) lookup(name string, f *flight) (loccache.Location, error) {
	s.reads.Add(1)
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.ReadTimeout)
	e, ok, err := s.table.Get(ctx, name)
	cancel()
	if err != nil {
		return loccache.Location{}, fmt.Errorf("locsvc: read %s: %w", name, err)
	}
	if ok {
		return e.Location(), nil
	}
	ctx, cancel = context.WithTimeout(s.ctx, s.cfg.ReadTimeout)
	_, err = store.PutRow(ctx, s.st, s.layout.CreateKey(name), []byte(s.cfg.Region))
	cancel()
	if err != nil {
		return loccache.Location{}, fmt.Errorf("locsvc: ask to create %s: %w", name, err)
	}
	s.creates.Add(1)
	t := time.NewTimer(s.cfg.CreateTimeout)
	defer t.Stop()
	select {
	case <-f.appeared:
		s.mu.Lock()
		loc := f.seen
		s.mu.Unlock()
		return loc, nil
	case <-t.C:
	case <-s.ctx.Done():
		return loccache.Location{}, store.ErrClosed
	}
	// The watch may lag behind the store: read once more before giving up.
	ctx, cancel = context.WithTimeout(s.ctx, s.cfg.ReadTimeout)
	defer cancel()
	if e, ok, err := s.table.Get(ctx, name); err == nil && ok {
		return e.Location(), nil
	}
	return loccache.Location{}, fmt.Errorf("%w: %s after %v", ErrCreateTimeout, name, s.cfg.CreateTimeout)
}

// cachePutLocked stores loc unless a newer view is cached; a full cache
// drops an arbitrary entry first (map order: cheap and good enough for a
// cache behind the loops' own).
func (s *Service) cachePutLocked(name string, loc loccache.Location) {
	if cur, ok := s.cache[name]; ok {
		if !loc.Before(cur) {
			s.cache[name] = loc
		}
		return
	}
	if len(s.cache) >= s.cfg.CacheCapacity {
		for k := range s.cache {
			delete(s.cache, k)
			break
		}
	}
	s.cache[name] = loc
}

// deliveries is the one ordered queue of answers and updates: one
// goroutine calls them, in push order. Unbounded, but every entry is a
// Resolve waiting or a watch batch, both bounded by their producers.
type deliveries struct {
	mu     sync.Mutex // guards q
	q      []func()
	notify chan struct{}
}

func (d *deliveries) init() { d.notify = make(chan struct{}, 1) }

func (d *deliveries) push(f func()) {
	d.mu.Lock()
	d.q = append(d.q, f)
	d.mu.Unlock()
	select {
	case d.notify <- struct{}{}:
	default:
	}
}

func (d *deliveries) take() []func() {
	d.mu.Lock()
	defer d.mu.Unlock()
	q := d.q
	d.q = nil
	return q
}

func (d *deliveries) run(ctx context.Context) {
	for {
		for _, f := range d.take() {
			f()
		}
		select {
		case <-ctx.Done():
			return
		case <-d.notify:
		}
	}
}

// drain runs what is left after run ended.
func (d *deliveries) drain() {
	for q := d.take(); len(q) > 0; q = d.take() {
		for _, f := range q {
			f()
		}
	}
}
