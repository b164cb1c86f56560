package tiers

// Stats is what a tier reports of itself: the one source of that tier's
// figures in the stats command, the admin API (GET /admin/v1/tiers) and
// /metrics, so the three views cannot disagree. It is a plain snapshot,
// built on each call from the tier's own counters; the caller owns it.
//
// Counter names are the admin API's (and, where the stats command prints
// the same counter, its names too); a tier adds names, never renames one.
type Stats struct {
	Counters map[string]uint64
	// Usage is what the tier holds; HasUsage is false when the tier does
	// not know (a pool's items live in its servers).
	Usage    Usage
	HasUsage bool
	// Servers are a pool's servers, in the pool's order; nil otherwise.
	Servers []ServerStats
}

// Usage is the items, bytes and evictions a tier holds, and its limit.
type Usage struct {
	Items, Bytes, LimitBytes, Evictions uint64
}

// ServerStats is one server of a pool tier.
type ServerStats struct {
	Addr string
	// Weight is the server's configured weight; 0 for a server only the
	// published topology names.
	Weight   int
	State    string // "up", "down" or "returning"
	Counters map[string]uint64
	// Failures splits the server's errors by kind: Timeouts, DownRejects
	// (refused while it was down) and OtherErrors, the rest.
	Timeouts, DownRejects, OtherErrors uint64
}
