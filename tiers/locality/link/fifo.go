package link

import "github.com/strata-cache/strata/tiers"

// pend is one request awaiting its reply, queued in its connection's
// ring.Queue.
type pend struct {
	op     *tiers.Op
	issued int64 // client clock (ms) when it was queued
	size   int32 // bytes of its encoding
}
