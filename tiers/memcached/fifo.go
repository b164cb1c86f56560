package memcached

import "github.com/strata-cache/strata/tiers"

// pend is one request awaiting its reply on a backend connection, queued
// in its ring.Queue.
type pend struct {
	op     *tiers.Op // nil for a flush_all part, which fan carries
	fan    *fanout
	issued int64 // pool clock (ms) when it was queued
	size   int32 // encoded bytes, counted in bconn.inflight
	shard  int32 // op's shard, for the load counters; -1 for flush_all
}
