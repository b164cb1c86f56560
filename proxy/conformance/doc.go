// Package conformance holds strata's end-to-end protocol tests. It has no
// product code: everything lives in its tests and in testdata/.
//
// The suite talks to a running strata over TCP exactly as a memcached client
// would, and to a real memcached started by the test, and demands the same
// bytes back from both:
//
//  1. TestDifferential replays testdata/exchanges.txt (the format is described
//     at the top of that file) against both servers and compares the replies
//     byte for byte. Only three things are masked, because they legitimately
//     differ between two correct servers: non-zero CAS uniques, the version
//     string, and the seconds reported by the meta t and l flags, which may
//     differ by the width of memcached's one-second clock tick.
//  2. TestMemccapable runs libmemcached's memccapable in ASCII mode.
//  3. TestBurst writes 1,000 mixed requests in one write and checks the
//     1,000 replies one by one, in order, against a model of the cache.
//  4. TestConcurrency hammers a small key set from 64 connections.
//  5. TestLongLine sends a 10 MB line without a newline.
//  6. TestLargeMultiGet sends multi-gets of 3,000 and 8,000 keys, 200 KB and
//     1.1 MB lines and the long lines memcached refuses to memcached and to
//     strata and compares the replies; TestLargeMultiGetBystander checks
//     that another client is served meanwhile.
//
// Tests 3 to 6 run on three set-ups (forEachTarget): the embedded tiers,
// an L1 pool over an L2 pool, and a single-tier pool, each pool one real
// memcached. Over pools, replies come back later than the request and out
// of step with the client's pipeline, which is where ordering bugs would
// show.
//
// Which server is "strata" is decided in one place: startStrata runs strata
// inside the test process on its default tiers (embedded L1 over embedded
// L2), and startStrataOverPools runs it over layered memcached pools
// (TestDifferentialOverPools, TestMemccapableOverPools). There is no build
// tag and no switch: every run tests strata. That the harness itself tells
// servers apart is proven separately: TestDifferentialDetectsDifferences
// aims it at memcached instances started with different options and
// demands that it reports the cases where they must differ.
//
// Ownership: every connection and goroutine a test opens is closed by that
// test before it returns; servers are stopped by t.Cleanup. Cases run one
// after another, never in parallel, because some (flush_all) affect every
// key of the server.
package conformance
