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
package tiers
