// Package tiers defines a cache layer and the operation that flows through
// it.
//
// Every data command of the memcached text and meta protocols becomes one
// Op per key: the proxy fills Op.Req, hands the Op to a Tier with Do, and
// gets it back through Op.Done with Op.Res filled. The embedded store
// (tiers/embedded) answers before Do returns; a memcached pool answers when
// the backend's reply arrives on the same event loop. The layering of L1
// over L2 (tiers/layered) is itself a Tier built from two others.
//
// Ownership: the issuer owns an Op until Done is called, and again after.
// A tier must not keep Req.Key or Req.Value past Done (copy what must
// outlive it) and must not touch the Op after calling Done. Res.Value is the
// Op's own buffer: tiers append into Res.Value[:0] so a warm Op costs no
// allocation.
//
// Ordering: Done runs on the event loop given by Op.Loop, never on another
// goroutine, so the proxy's per-connection state needs no lock.
//
// # The stack
//
// A request goes from the proxy down a stack of Tiers, each wrapping the
// next; every layer but the store is optional:
//
//  1. proxy: parses the command into one Op per key, gives each a slot in
//     the connection's reply queue (Op.Ctx) so replies leave in request
//     order, and, once answered, records it if its key is in the sample
//     (package sampler: working sets, hotness, the promotion model).
//  2. tiers/locality: acts on μ-shard keys only: serves the key here (the
//     local tiers below, with the move protocol of tiers/handoff while the
//     μ-shard migrates) or forwards the request to the region that serves
//     it.
//  3. tiers/hotkeys: acts on keys under a split rule only: spreads a hot
//     key over sub-keys or copies and folds their answers.
//  4. tiers/layered: L1, then L2 for reads L1 may answer
//     (Request.Cacheable), promoting a sample of L2 hits into L1; every
//     other request goes to L2, and a write then invalidates L1. It always
//     works through a sub-Op of its own, since every request has an L2 leg.
//  5. tiers/embedded or tiers/memcached: the store; a memcached pool runs
//     shard moves and read replicas with the same move protocol.
//
// A wrapper that has nothing to do for a request (a key with no μ-shard,
// no split rule, a flush_all) hands the same Op down unchanged, so the
// common path costs a lookup per layer and no copy. The layers classify
// requests with Request.IsWrite, IsRead and Cacheable; a layer whose rule
// differs on purpose says why where it keeps its own.
//
// # Event loops
//
// The loops belong to the proxy, and a tier that needs them
// takes them in its constructor, so none can exist without them. The
// composer makes the proxy's loop handle (proxy.NewLoops) first, builds
// the tiers on it, then the proxy on the same handle. Each tier declares
// the little it uses: the layering, the hot-key tier and the locality
// router an Executor (Run a function on a given loop, to resume work
// there); a memcached pool and the region-link client memcached.Loops
// (dial onto a loop, run on it, and Join). A pool or link client joins the
// loops in its constructor, and the proxy starts and flushes exactly those
// that joined the handle it is bound to: there is no second list to
// forget one in. Joining closes when the proxy is built, so a pool built
// after its proxy fails at construction. Tests that drive a tier from one
// goroutine pass an executor that runs the function at once.
package tiers
