// Package plane composes the locality tier of one strata: the router
// (tiers/locality) in front of the local tiers, the link client to the
// other regions, the location service (locsvc) that is the router's
// Directory and feeds it the location table's changes, the placement
// candidate (placesvc.Runner) and the admin view (placesvc.View). They
// meet in one control store client, which the Plane owns.
//
// A process without a data plane (strata control) builds a Plane with no
// inner tier: it has only the candidate and the view.
//
// Usage contract:
//
//  1. New builds everything without starting a goroutine. It owns
//     Deps.Store from the call on: on error it has closed it.
//  2. Router is what the proxy serves from (nil without a data plane);
//     the link client joined Deps.Loops in New, so the proxy starts and
//     flushes it.
//  3. Start writes the rule pins (bounded by PinTimeout: a store that is
//     down delays the start that long, and the pins wait for a restart),
//     then starts the location service, feeding the router, then the
//     candidate. AwaitReady then waits, bounded, for the location
//     service's first read of the table: until then a μ-shard request
//     answers as if its owner were unreachable.
//  4. Stop ends the goroutines in the reverse order of the data flow: the
//     candidate resigns first, then the location service stops (its acks
//     and counters with it), then Close closes the links and the store
//     client. Stop is bounded by its ctx.
//  5. Close releases what New built without stopping goroutines (a start
//     that failed, or after Stop). It is idempotent.
//
// Goroutines: the link client's (run on the proxy's loops), the location
// service's and the candidate's own; Start starts them, Stop ends them.
// Metrics, Admin and RegionView are safe from any goroutine.
package plane
