package memcached

import "sync/atomic"

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

// ShardLoad returns a snapshot of the per-shard counters. It takes no lock
// a request takes and allocates only the result; before Start every count
// is zero.
func (p *Pool) ShardLoad() ShardLoad {
	l := ShardLoad{Requests: make([]uint64, p.cfg.Shards), Bytes: make([]uint64, p.cfg.Shards), Reads: make([]uint64, p.cfg.Shards)}
	if !p.started.Load() { // orders the reads of lstates after Start wrote them
		return l
	}
	for _, ls := range p.lstates {
		for i := range ls.load {
			c := &ls.load[i]
			l.Requests[i] += c.requests.Load()
			l.Bytes[i] += c.bytes.Load()
			l.Reads[i] += c.reads.Load()
		}
	}
	return l
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
