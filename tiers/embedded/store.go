package embedded

import (
	"fmt"
	"math/bits"
	"sync/atomic"

	"github.com/strata-cache/strata/tiers"
)

// Store is the embedded cache. It is safe for concurrent use; every method
// may be called from any goroutine.
type Store struct {
	shards []shard
	// shift turns a key hash into a shard index (its top bits), leaving the
	// low bits, which the index maps hash on, independent of the shard.
	shift uint

	maxItem      int
	appendVivify bool
	now          func() int64
	maxBytes     atomic.Int64 // Config.MaxBytes; SetMaxBytes changes it
	snapshot     string       // Config.Snapshot

	// cas is the last CAS handed out. Like memcached's, one counter serves
	// the whole store, so a CAS identifies a write globally.
	cas atomic.Uint64
	// flush is the current flush_all state, nil until the first flush_all.
	flush     atomic.Pointer[flushState]
	flushCmds atomic.Uint64
	// statsBase is Stats at the last ResetStats (stats reset).
	statsBase atomic.Pointer[Stats]
}

var _ tiers.Tier = (*Store)(nil)

// Phase is 0: the store answers within Do, so nothing it serves is ever in
// flight to be overtaken.
func (*Store) Phase(*tiers.Request) uint8 { return 0 }

// New returns an empty store. Memory is taken as items arrive.
func New(cfg Config) (*Store, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Store{
		shards:       make([]shard, cfg.Shards),
		shift:        uint(64 - bits.TrailingZeros(uint(cfg.Shards))),
		maxItem:      cfg.MaxItemSize,
		appendVivify: cfg.AppendVivify,
		now:          cfg.Now,
		snapshot:     cfg.Snapshot,
	}
	s.maxBytes.Store(cfg.MaxBytes)
	budget := cfg.MaxBytes / int64(cfg.Shards)
	for i := range s.shards {
		s.shards[i].init(budget)
	}
	return s, nil
}

// Do performs op.Req, fills op.Res and calls op.Done before returning. The
// store reads op.Req.Key and op.Req.Value only during the call and copies
// what it keeps. op.Res.Value is overwritten in place, reusing its
// capacity, so a warm Op costs no allocation on a hit.
func (s *Store) Do(op *tiers.Op) {
	op.Res.Reset()
	switch op.Req.Kind {
	case tiers.KindGet:
		s.get(&op.Req, &op.Res)
	case tiers.KindSet:
		s.set(&op.Req, &op.Res)
	case tiers.KindDelete:
		s.delete(&op.Req, &op.Res)
	case tiers.KindArith:
		s.arith(&op.Req, &op.Res)
	case tiers.KindFlush:
		s.flushAll(&op.Req, &op.Res)
	default:
		invalid(&op.Res, "unknown kind %d", op.Req.Kind)
	}
	if op.Done != nil {
		op.Done(op)
	}
}

func invalid(res *tiers.Result, format string, args ...any) {
	res.Status = tiers.StatusError
	res.Err = fmt.Errorf("%w: "+format, append([]any{ErrInvalidRequest}, args...)...)
}

func (s *Store) shardFor(h uint64) *shard {
	return &s.shards[h>>s.shift]
}

func (s *Store) nextCAS() uint64 { return s.cas.Add(1) }

// flushAll is memcached's flush_all: every item linked or bumped up to the
// flush moment becomes invisible once that moment comes. Req.TTL is the
// delay, in the same relative-or-absolute convention as an exptime; zero or
// negative means now.
func (s *Store) flushAll(req *tiers.Request, res *tiers.Result) {
	now := s.now()
	at := now
	if req.TTL > 0 {
		at = exptimeAt(req.TTL, now)
	}
	f := &flushState{live: at - 1}
	immediate := f.live <= now
	if immediate {
		f.cas = s.nextCAS()
	} else if old := s.flush.Load(); old != nil {
		// memcached leaves oldest_cas alone for a delayed flush.
		f.cas = old.cas
	}
	s.flush.Store(f)
	s.flushCmds.Add(1)
	if immediate {
		for i := range s.shards {
			sh := &s.shards[i]
			sh.mu.Lock()
			sh.sweepLocked(now, f)
			sh.mu.Unlock()
		}
	}
	res.Status = tiers.StatusStored
}

// Stats returns a snapshot of the counters.
func (s *Store) Stats() Stats {
	st := Stats{LimitMaxBytes: uint64(s.maxBytes.Load()), CmdFlush: s.flushCmds.Load()}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		st.CurrItems += uint64(sh.items)
		st.Bytes += uint64(sh.bytes)
		st.add(&sh.c)
		sh.mu.Unlock()
	}
	return st
}

// Len returns the number of items held, counting expired items that have
// not been reclaimed yet (memcached's curr_items).
func (s *Store) Len() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n += sh.items
		sh.mu.Unlock()
	}
	return n
}

// itemTotal is the size memcached gives an item when it checks -I: the
// 48-byte item header, the 8-byte CAS, the key and its terminator, the
// client flags when they are not zero, and the value with its CRLF.
func itemTotal(klen int, flags uint32, vlen int) int {
	n := 48 + 8 + klen + 1 + vlen + 2
	if flags != 0 {
		n += 4
	}
	return n
}

// chunkMax is memcached's default slab_chunk_max. Larger items are stored in
// chunks, and memcached refuses arithmetic on chunked items.
const chunkMax = 512 << 10
