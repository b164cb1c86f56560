// Package storetest is the one test suite every control-plane store
// passes: the in-memory store and etcd run the same functions through a
// Harness that knows how to start a fresh store, connect a client (one
// process), cut a client off, compact history and let lease time pass.
//
// The suite covers rows and revisions, compare-and-swap, watches from a
// revision, watches resumed after a disconnection and reset after a
// compaction, lease expiry, elections with failover and resignation,
// fenced writes of a deposed leader, versioned publications, and a leader
// killed in the middle of a publication.
//
// Goroutines: campaigns and appliers run in goroutines owned by the test
// that starts them and end with it (their contexts are cancelled in
// cleanups).
package storetest
