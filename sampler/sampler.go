package sampler

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/strata-cache/strata/sampler/family"
	"github.com/strata-cache/strata/sampler/report"
	"github.com/strata-cache/strata/sampler/ring"
	"github.com/strata-cache/strata/sampler/samplelog"
)

// Op is the kind of a recorded access.
type Op = samplelog.Op

// The ops a record can carry.
const (
	OpGet    = samplelog.OpGet    // get, gets, gat, gats, mg
	OpSet    = samplelog.OpSet    // set, add, replace, append, prepend, cas, ms
	OpDelete = samplelog.OpDelete // delete, md
	OpArith  = samplelog.OpArith  // incr, decr, ma
	OpTouch  = samplelog.OpTouch  // touch
)

// Report is the analysis Live returns, the same type `strata report`
// produces from log files.
type Report = report.Report

// MaxKeyLen is the longest key a record keeps (memcached's key limit).
// Longer keys are cut to it in the log; key_size keeps the true length.
const MaxKeyLen = 250

// Record is one access of a sampled key, as the data plane reports it.
type Record struct {
	// TimeUnixNano is when the access happened; 0 lets the drainer stamp
	// it with the sampler's clock when it takes the record off the ring.
	TimeUnixNano int64
	Op           Op
	// Key is borrowed: Record copies it before returning.
	Key []byte
	// KeySize is the key's length (0 means len(Key)); ValueSize the bytes
	// of the value read or written, 0 if none.
	KeySize, ValueSize int
	// Level is the tier that answered, as tiers.Result.Level: 0 miss (or
	// a write), 1 L1 hit, 2 L2 hit.
	Level uint8
	// Promoted: this L2 hit was copied into L1.
	Promoted bool
}

// slot is a record inside the ring, with its own copy of the key.
type slot struct {
	time      int64
	rate      uint64
	keySize   int
	valueSize int
	op        Op
	level     uint8
	promoted  bool
	keyLen    uint8
	key       [MaxKeyLen]byte
}

// Sampler decides which keys are sampled and carries their accesses from
// the event loops to the sample log and the live aggregates.
type Sampler struct {
	cfg  Config
	rate atomic.Uint64
	ring *ring.Ring[slot]

	// wakeAt is the ring occupancy at which a producer wakes the drainer
	// early; wakePending suppresses repeated wake-ups until it has run.
	wakeAt      int
	wakePending atomic.Bool
	wake        chan struct{}
	syncReq     chan chan struct{}
	// asleep is set by a drainer that found the ring empty and stopped
	// its ticker; the producer that clears it sends on rouse, so a quiet
	// sampler costs no wakeups and a record still waits at most
	// DrainInterval.
	asleep atomic.Bool
	rouse  chan struct{}

	lifeMu  sync.Mutex // guards started, the closing of stop and done
	started bool
	stopped atomic.Bool   // set once by Stop; Record drops from then on
	stop    chan struct{} // closed by Stop
	done    chan struct{} // closed when the final drain and log close are done
	stopErr error         // written before done is closed

	late atomic.Uint64 // records refused because the sampler had stopped

	d drainer

	liveMu sync.Mutex // guards live
	live   liveBuffer
}

// New validates cfg, prepares the ring and the log directory, and returns a
// sampler that records but does not drain until Start.
func New(cfg Config) (*Sampler, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	norm, err := family.New(cfg.Families)
	if err != nil {
		return nil, fmt.Errorf("sampler: %w", err)
	}
	rg, err := ring.New[slot](cfg.RingSize)
	if err != nil {
		return nil, fmt.Errorf("sampler: %w", err)
	}
	s := &Sampler{
		cfg:     cfg,
		ring:    rg,
		wakeAt:  max(cfg.RingSize/2, 1),
		wake:    make(chan struct{}, 1),
		rouse:   make(chan struct{}, 1),
		syncReq: make(chan chan struct{}),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		live:    liveBuffer{max: cfg.MaxLiveRecords},
	}
	s.rate.Store(cfg.Rate)
	s.d = drainer{s: s, norm: norm, intern: map[string]string{}}
	if cfg.Dir != "" {
		w, err := samplelog.NewWriter(samplelog.WriterConfig{
			Dir: cfg.Dir, Prefix: "strata-" + cfg.Cluster + "-" + cfg.Region,
			MaxBytes: cfg.MaxFileBytes, MaxAge: cfg.MaxFileAge, Gzip: cfg.Gzip, Now: cfg.Now,
		})
		if err != nil {
			return nil, fmt.Errorf("sampler: %w", err)
		}
		s.d.log = w
	}
	return s, nil
}

// Sampled reports whether key is in the sample at the current rate. It is
// called for every request on the event loops: a hash and a modulo, no
// allocation, no lock.
func (s *Sampler) Sampled(key []byte) bool {
	r := s.rate.Load()
	return r != 0 && KeyHash(s.cfg.Seed, key)%r == 0
}

// SetRate changes the sample rate; requests checked after it returns use the
// new rate. 0 disables sampling. Keys sampled under one rate are not in
// general sampled under another, so a report over a rate change weighs each
// key by the rate of its newest record.
func (s *Sampler) SetRate(r uint64) { s.rate.Store(r) }

// Rate returns the current sample rate.
func (s *Sampler) Rate() uint64 { return s.rate.Load() }

// Record enqueues one access of a sampled key. It never blocks and never
// allocates: the record and a copy of its key go into a ring slot, or, if
// the ring is full or the sampler stopped, the record is dropped and
// counted. Safe for concurrent use by any number of event loops.
func (s *Sampler) Record(r *Record) {
	rate := s.rate.Load()
	if rate == 0 {
		return
	}
	if s.stopped.Load() {
		s.late.Add(1)
		return
	}
	sl, ok := s.ring.Reserve()
	if !ok {
		return // counted by the ring
	}
	v := &sl.Val
	v.time = r.TimeUnixNano
	v.rate = rate
	v.op = r.Op
	v.level = r.Level
	v.promoted = r.Promoted
	v.valueSize = r.ValueSize
	v.keySize = r.KeySize
	if v.keySize == 0 {
		v.keySize = len(r.Key)
	}
	v.keyLen = uint8(copy(v.key[:], r.Key))
	s.ring.Commit(sl)
	if s.asleep.Load() && s.asleep.CompareAndSwap(true, false) {
		select {
		case s.rouse <- struct{}{}:
		default:
		}
	}
	if s.ring.Len() >= s.wakeAt && !s.wakePending.Load() && s.wakePending.CompareAndSwap(false, true) {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// Start starts the drainer goroutine, which the sampler owns until Stop.
// Calling it again, or after Stop, does nothing.
func (s *Sampler) Start() {
	s.lifeMu.Lock()
	defer s.lifeMu.Unlock()
	if s.started || s.stopped.Load() {
		return
	}
	s.started = true
	go s.d.run()
}

// Sync has the drainer take everything off the ring, write it to the log
// and flush it, and returns when that is done or ctx ends. Without a
// running drainer it does the work itself.
func (s *Sampler) Sync(ctx context.Context) error {
	s.lifeMu.Lock()
	started := s.started
	s.lifeMu.Unlock()
	if s.stopped.Load() {
		select {
		case <-s.done:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("sampler sync: %w", ctx.Err())
		}
	}
	if !started {
		s.lifeMu.Lock()
		defer s.lifeMu.Unlock()
		s.d.drainAll()
		return nil
	}
	ch := make(chan struct{})
	select {
	case s.syncReq <- ch:
	case <-s.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("sampler sync: %w", ctx.Err())
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("sampler sync: %w", ctx.Err())
	}
}

// Stop refuses new records, drains the ring, then flushes and closes the
// sample log. It returns when that is done (with the log's close error, if
// any) or when ctx ends, whichever is first; the drainer still finishes in
// the background then. Stop is idempotent. A record racing with Stop may be
// lost (see the package comment).
func (s *Sampler) Stop(ctx context.Context) error {
	s.lifeMu.Lock()
	if !s.stopped.Load() {
		s.stopped.Store(true)
		close(s.stop)
		if !s.started {
			s.d.finish()
		}
	}
	s.lifeMu.Unlock()
	select {
	case <-s.done:
		return s.stopErr
	case <-ctx.Done():
		return fmt.Errorf("sampler stop: %w", ctx.Err())
	}
}

// Stats are the sampler's counters, all monotonic except the gauges
// LiveRecords and RingLen.
type Stats struct {
	Rate          uint64 // current sample rate (0: off)
	Recorded      uint64 // records accepted into the ring
	Dropped       uint64 // records refused: ring full, or after Stop
	Drained       uint64 // records taken off the ring
	Written       uint64 // records written to the sample log
	LogErrors     uint64 // failed log operations (open, write, flush, rotate); their records are lost
	LogFiles      uint64 // log files completed (closed and renamed)
	KeysTruncated uint64 // records whose key was longer than MaxKeyLen
	LiveRecords   int    // records held for Live
	LiveEvicted   uint64 // records pushed out of the live buffer before their window ended
	RingLen       int
	RingCap       int
}

// Stats returns a snapshot of the counters. Safe from any goroutine.
func (s *Sampler) Stats() Stats {
	s.liveMu.Lock()
	liveN := s.live.n
	s.liveMu.Unlock()
	return Stats{
		Rate:          s.rate.Load(),
		Recorded:      s.ring.Pushed(),
		Dropped:       s.ring.Dropped() + s.late.Load(),
		Drained:       s.ring.Drained(),
		Written:       s.d.written.Load(),
		LogErrors:     s.d.logErrors.Load(),
		LogFiles:      s.d.logFiles.Load(),
		KeysTruncated: s.d.truncated.Load(),
		LiveRecords:   liveN,
		LiveEvicted:   s.d.evicted.Load(),
		RingLen:       s.ring.Len(),
		RingCap:       s.ring.Cap(),
	}
}
