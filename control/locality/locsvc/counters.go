package locsvc

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/tickgrid"
)

// maxChunk bounds one counter row: well under etcd's default request
// limit (1.5 MiB) even with several chunks in one transaction.
const maxChunk = 256 << 10

// chunksPerTxn: chunks written in one transaction (4 × 256 KiB).
const chunksPerTxn = 4

// counterShards is the service's Tally and the state of its shipments.
type counterShards struct {
	*Tally
	lease   atomic.Int64 // the session lease counter rows are put on; 0: none
	chunks  int          // chunks of the last shipment (owned by shipLoop)
	shipped int          // shipments so far (owned by shipLoop)
}

func (c *counterShards) init(cfg Config) { c.Tally = NewTally(cfg.HalfLife, cfg.LocalEvery) }

func (c *counterShards) setSession(l store.LeaseID) { c.lease.Store(int64(l)) }

// Access implements the router's Directory: it counts one request of a
// client of this strata for the μ-shard name; remote tells whether another
// region served it. It takes one of 64 locks for a map lookup and does not
// allocate once the μ-shard is held; it never waits for the store.
func (s *Service) Access(name string, remote bool) { s.counters.Access(name, remote) }

// Served implements the router's Directory: a peer region forwarded a
// request for name here, so its local count is worth shipping (Tally).
func (s *Service) Served(name string) { s.counters.Served(name) }

// shipLoop ships the counts every CounterInterval (what Tally.Collect
// keeps), and the capacity report with them.
func (s *Service) shipLoop() {
	for {
		// On the process's timer grid: a batch every CounterInterval,
		// sharing its wake-up with the other periodic work.
		s.pause(tickgrid.Until(time.Now(), s.cfg.CounterInterval))
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
	at := s.cfg.Now()
	s.counters.shipped++
	counts := s.counters.Collect(at)
	lease := store.LeaseID(s.counters.lease.Load())
	if len(counts) == 0 || lease == 0 {
		return
	}
	chunks := EncodeChunks(s.cfg.Region, at, counts)
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

// EncodeChunks encodes counts (as Tally.Collect returns them) as the
// batches of one shipment, each at most maxChunk bytes but for a single
// larger count: the row values a strata writes under counters/.
func EncodeChunks(region string, at time.Time, counts []Count) [][]byte {
	var chunks [][]byte
	for len(counts) > 0 {
		size, n := 0, 0
		for n < len(counts) && (n == 0 || size+countSize(counts[n]) <= maxChunk) {
			size += countSize(counts[n])
			n++
		}
		chunks = append(chunks, EncodeBatch(Batch{Region: region, At: at, Counts: counts[:n]}))
		counts = counts[n:]
	}
	return chunks
}
