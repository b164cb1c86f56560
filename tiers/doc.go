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
// Event loops: the loops belong to the proxy, and a tier that needs them
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
