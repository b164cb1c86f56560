// Package embedded is the in-process cache tier: a bounded, sharded store
// that answers tiers.Op requests with the semantics of memcached 1.6.18, so
// that a client sees what a memcached server would show it. It is
// strata's default L1 (64 MiB) and L2 (1 GiB, taken as used).
//
// # Data path
//
// Do hashes the key with xxhash, locks the one shard the top bits of the
// hash select, performs the operation, fills op.Res and calls op.Done, all
// before it returns. There are no goroutines: the caller's goroutine (an
// event loop) does the work, and many loops may call Do at once. A shard is
// a pointer-free open-addressing index from hash to entry index, a slice of
// entries, and an LRU list through them; its mutex guards all three and its
// counters.
//
// # Buffer ownership
//
// op.Req.Key and op.Req.Value are borrowed for the duration of Do; the store
// copies what it keeps into buffers it owns and never hands out. Values are
// copied out into op.Res.Value, appended to op.Res.Value[:0], and only when
// the request asks for the value (WantValue), so a reused Op reads a hit
// without allocating. An overwrite with a value of the same size reuses the
// item's buffer.
//
// # Memory
//
// Each item is charged len(key)+len(value)+ItemOverhead bytes against its
// shard's budget, MaxBytes/Shards. A store that would exceed the budget
// first frees expired or flushed items near the LRU tail, then evicts the
// least recently used live items. Reads (other than mg u) move an item to
// the head. Expired items are otherwise reclaimed when a lookup meets them.
//
// MaxBytes bounds what is live, not the process: every item is its own Go
// allocation, rounded up to the allocator's size class (at most 1/8 more
// up to 32 KiB; whole 8 KiB pages above, 6.5 % for a 100 KB value), and
// the collector, left to GOGC, lets the heap reach about twice what is
// live before it runs. A process that embeds stores should therefore give
// the runtime a memory limit (runtime/debug.SetMemoryLimit) derived from
// their MaxBytes; strata serve sets the sum of the embedded budgets plus
// 1/8 plus 32 MiB. Measured with 1 GiB + 64 MiB configured and 2 GB of
// 100 KB values written: RSS 1.9 GiB without the limit, 1.1x configured
// with it (memcached -m 1088: 1.0x).
//
// # Warm restart
//
// With Config.Snapshot set, Save writes the live items to that file
// (through a temporary name, a sync and a rename) and Restore loads them
// into a new store before it serves, then removes the file. Both walk one
// shard lock at a time and start no goroutine; Save is meant for a store
// no request reaches any more. snapshot.go describes the format; a file
// Restore cannot use is refused whole and moved aside, leaving the store
// empty.
//
// # Inspection
//
// inspect.go computes what memcached's stats items, stats slabs, stats
// cachedump, me and lru_crawler metadump show from the items themselves,
// placing each in the slab class memcached's default settings would give
// it; the walk holds one shard lock at a time (see inspect.go for what is
// real and what reads 0).
//
// # Text and meta
//
// A request carries its protocol in Request.Text. The two differ in two
// details the store reproduces: a text get of a stale item hands out no win
// token, and a store that fails for size drops the old item for text set
// only but for ms in every mode.
//
// # Time
//
// Every expiry decision reads Config.Now, one call per operation, in Unix
// seconds. TTLs follow memcached: 0 never expires, negative is already
// expired, up to 30 days is relative, beyond that absolute.
//
// # Where it departs from memcached 1.6.18
//
// They follow from storing absolute times, from having no background LRU
// threads and from not sharing memcached's memory layout, and show only in
// corner cases:
//   - mg flags are applied in a fixed order (N, T, R, then the reports);
//     memcached applies them in wire order, which differs only for a client
//     that puts t before T, or T before N.
//   - A TTL reported for an item that this very request expired (mg with a
//     negative T) is 0; memcached prints an unsigned wrap-around.
//   - flush_all with an absolute time before the server's start is
//     immediate here; memcached ignores it. Its LRU crawler may also have
//     reclaimed flushed items that a later delayed flush_all would
//     otherwise have revived; this store reclaims them at once.
//   - mg l: the first read of an item leaves its access time alone and
//     later reads refresh it, which is what a running memcached shows; its
//     exact behaviour depends on when the LRU maintainer runs.
//   - Eviction order is one exact LRU per shard instead of memcached's
//     segmented per-slab-class LRU.
//   - incr/decr rewrites a value in place whenever the new number fits.
//     memcached does too, unless another thread holds the item at that
//     moment (its LRU maintainer, say); then it replaces the item, without
//     padding, and ma's T is lost as described in arith.go.
//   - For a stored number of 2^63 or more memcached also looks for a minus
//     sign past the end of the value, in whatever its slab memory holds;
//     the store looks only at the value.
//   - ms in append mode with N creates the item only when
//     Config.AppendVivify is set (the behaviour of later memcached versions).
package embedded
