package memcached

import (
	"slices"
	"sync/atomic"
)

// shardCounter is one loop's count of one shard's traffic. Only that loop
// adds to it, so the adds are uncontended; they are atomic only so that
// ShardLoad may read them from another goroutine.
type shardCounter struct {
	requests atomic.Uint64
	bytes    atomic.Uint64
	reads    atomic.Uint64
}

// ShardLoad is the traffic of each shard since the pool started, summed
// over event loops; index i is shard i. The shard-assignment loop takes
// the difference of two snapshots as the load of the interval between.
type ShardLoad struct {
	// Requests counts the requests routed to each shard, including those
	// failed at once (a down server's shards still have demand). flush_all
	// belongs to no shard and is not counted.
	Requests []uint64
	// Bytes counts key and value bytes sent for each shard plus value
	// bytes received in replies: the traffic the shard's server carries.
	Bytes []uint64
	// Reads counts the requests of Requests that read (get, touch, gat):
	// the load read replicas share, since writes reach every replica.
	Reads []uint64
}

// ShardLoad fills l with a snapshot of the per-shard counters, reusing
// the room of l's slices: the shard-assignment loop reads one every report
// interval, and thousands of shards would otherwise be three fresh arrays
// each time (and, on an idle strata, most of what it allocates). It takes
// no lock a request takes; before Start every count is zero.
func (p *Pool) ShardLoad(l *ShardLoad) {
	l.Requests = zeroed(l.Requests, p.cfg.Shards)
	l.Bytes = zeroed(l.Bytes, p.cfg.Shards)
	l.Reads = zeroed(l.Reads, p.cfg.Shards)
	if !p.started.Load() { // orders the reads of lstates after Start wrote them
		return
	}
	for _, ls := range p.lstates {
		for i := range ls.load {
			c := &ls.load[i]
			l.Requests[i] += c.requests.Load()
			l.Bytes[i] += c.bytes.Load()
			l.Reads[i] += c.reads.Load()
		}
	}
}

// zeroed returns n zeros in s's room, or in a new array if s has too little.
func zeroed(s []uint64, n int) []uint64 {
	s = slices.Grow(s[:0], n)[:n]
	clear(s)
	return s
}

// countRequest adds a request of shard to loop ls's counters.
func (ls *loopState) countRequest(shard int, bytes int, read bool) {
	c := &ls.load[shard]
	c.requests.Add(1)
	c.bytes.Add(uint64(bytes))
	if read {
		c.reads.Add(1)
	}
}

// countReply adds the value bytes of a reply for shard; shard < 0 (a part
// of flush_all) counts nothing.
func (ls *loopState) countReply(shard int32, bytes int) {
	if shard >= 0 && bytes > 0 {
		ls.load[shard].bytes.Add(uint64(bytes))
	}
}
