package locsvc

import (
	"context"
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/strata-cache/strata/control/store"
)

// counterShardCount spreads Access over this many locks, so event loops
// recording accesses to different μ-shards rarely meet on one.
const counterShardCount = 64

// maxChunk bounds one counter row: well under etcd's default request
// limit (1.5 MiB) even with several chunks in one transaction.
const maxChunk = 256 << 10

// chunksPerTxn: chunks written in one transaction (4 × 256 KiB).
const chunksPerTxn = 4

// counterShards count accesses per μ-shard between two shipments.
type counterShards struct {
	seed    maphash.Seed
	shards  [counterShardCount]counterShard
	lease   atomic.Int64 // the session lease counter rows are put on; 0: none
	chunks  int          // chunks of the last shipment (owned by shipLoop)
	shipped int          // shipments so far (owned by shipLoop)
}

type counterShard struct {
	mu sync.Mutex // guards m
	// m: counts since the last shipment. An entry idle for a whole
	// interval is removed, so the map holds the μ-shards in use.
	m map[string]*access
	_ [48]byte // keep neighbouring shards' locks off one cache line
}

type access struct {
	n, remote uint64
	idle      bool // shipped nothing at the last shipment
}

func (c *counterShards) init() {
	c.seed = maphash.MakeSeed()
	for i := range c.shards {
		c.shards[i].m = make(map[string]*access)
	}
}

func (c *counterShards) setSession(l store.LeaseID) { c.lease.Store(int64(l)) }

// Access implements the router's Directory: it counts one request of a
// client of this strata for the μ-shard name; remote tells whether another
// region served it. It takes one of 64 locks for a map lookup and does not
// allocate once the μ-shard was counted in the last interval; it never
// waits for the store.
func (s *Service) Access(name string, remote bool) {
	c := &s.counters
	sh := &c.shards[maphash.String(c.seed, name)%counterShardCount]
	sh.mu.Lock()
	a := sh.m[name]
	if a == nil {
		a = &access{}
		sh.m[strings.Clone(name)] = a // name may borrow a request's bytes
	}
	a.n++
	if remote {
		a.remote++
	}
	sh.mu.Unlock()
}

// collect takes the counts since the last shipment of each μ-shard. A
// μ-shard with a remote access goes every time; one used only locally
// goes only when withLocal, its counts accumulating meanwhile (the
// placement service needs them only to weigh them against remote use,
// and only after migrate_after). μ-shards idle for a whole interval are
// forgotten.
func (c *counterShards) collect(withLocal bool) []Count {
	var out []Count
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		for name, a := range sh.m {
			switch {
			case a.n == 0:
				if a.idle {
					delete(sh.m, name)
				}
				a.idle = true
			case a.remote > 0 || withLocal:
				out = append(out, Count{Name: name, N: a.n, Remote: a.remote > 0})
				a.n, a.remote, a.idle = 0, 0, false
			}
		}
		sh.mu.Unlock()
	}
	return out
}

// shipLoop ships the counts every CounterInterval (local-only ones every
// LocalEvery intervals), and the capacity report with them.
func (s *Service) shipLoop() {
	for {
		s.pause(s.cfg.CounterInterval)
		if s.ctx.Err() != nil {
			return
		}
		s.ship()
		s.reportCapacity()
	}
}

// ship writes one batch of the counts since the last one, in chunks of at
// most maxChunk bytes, under counters/<member>/<i> on the session lease,
// and deletes the chunks of a longer earlier batch. Counts that cannot be
// written (no session, the store down) are dropped: they are a sample of
// recent use, and the next intervals carry on.
func (s *Service) ship() {
	withLocal := s.counters.shipped%s.cfg.LocalEvery == 0
	s.counters.shipped++
	counts := s.counters.collect(withLocal)
	lease := store.LeaseID(s.counters.lease.Load())
	if len(counts) == 0 || lease == 0 {
		return
	}
	at := s.cfg.Now()
	var chunks [][]byte
	for len(counts) > 0 {
		size, n := 0, 0
		for n < len(counts) && (n == 0 || size+countSize(counts[n]) <= maxChunk) {
			size += countSize(counts[n])
			n++
		}
		b := appendBatchHeader(make([]byte, 0, size+32), s.cfg.Region, at, n)
		for _, c := range counts[:n] {
			b = appendCount(b, c)
		}
		chunks = append(chunks, b)
		counts = counts[n:]
	}
	var ops []store.Op
	var bytes, puts uint64
	flush := func() bool {
		ctx, cancel := context.WithTimeout(s.ctx, s.cfg.ReadTimeout)
		defer cancel()
		if _, err := s.st.Txn(ctx, nil, ops); err != nil {
			if s.ctx.Err() == nil {
				s.cfg.Logger.Warn("locality counters", "err", err)
			}
			return false
		}
		s.counterBytes.Add(bytes)
		s.counterBatches.Add(puts)
		ops, bytes, puts = ops[:0], 0, 0
		return true
	}
	for i, b := range chunks {
		key := s.layout.CounterKey(s.cfg.Member, i)
		ops = append(ops, store.PutLease(key, b, lease))
		bytes += uint64(len(key) + len(b))
		puts++
		if len(ops) == chunksPerTxn && i < len(chunks)-1 && !flush() {
			return
		}
	}
	for i := len(chunks); i < s.counters.chunks; i++ {
		ops = append(ops, store.Delete(s.layout.CounterKey(s.cfg.Member, i)))
	}
	if flush() {
		s.counters.chunks = len(chunks)
	}
}
