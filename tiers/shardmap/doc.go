// Package shardmap maps keys to shards and shards to servers.
//
// A key belongs to shard xxhash(seed, key) mod S, where S is fixed for the
// life of a tier; a shard belongs to the server a Map names for it. A Map is
// an immutable value, so a pool swaps a whole map at once (atomically) and
// a reader never sees half of a change.
//
// The first map of a pool is Rendezvous: weighted highest-random-weight
// hashing of shard ids. It is a pure function of the server list, the
// weights, S and the seed, so every proxy that reads the same configuration
// computes the same map without talking to the others, and it moves no more
// shards than it must when the list changes: removing a server moves only
// that server's shards, adding one moves only the shards the newcomer wins
// (about S·w/W of them). Its spread is binomial rather than exact: a server
// with share p of the weight gets S·p shards with a relative standard
// deviation of sqrt((1-p)/(S·p)), 2.7 % for four equal servers and
// S = 4096. The shard-assignment control loop later replaces it with maps
// computed from load, through the same type (New).
//
// Versions and topologies. A rendezvous map has version 0; a published map
// carries the publisher's version, 1 and up. A Topology is a map plus the
// servers a pool keeps connections to (members that own nothing now, such
// as draining or returning ones, included) and what the control plane
// says of each. A pool applies a topology whole, and only one that
// Supersedes the one in force: a higher version, never an older one,
// because watch events can arrive late. Nothing here is specific to
// memcached: any tier that spreads keys over servers uses it.
//
// Moves (move.go). A published map may give a shard, besides its owner, a
// move in flight: {from, to, phase}, phase being prepare (owner = from),
// handoff or settle (owner = to). The map carries the step; the pools
// carry it out (tiers/memcached states the protocol and its proof) and
// the control plane advances it one step at a time, each only once every
// proxy has applied the one before. Members carry an incarnation, which
// the control plane bumps when a server that lost its shards is let
// back, so that every pool flushes it before reading from it even if the
// pool never saw it fail and skipped the maps in between.
//
// Conversion (layout.go). A published map may keep shards on a pool's
// compat layout (the incumbent's per-key placement) and convert them to
// itself by moves whose source is the layout, asked per key.
//
// Replicas (replica.go). A published map may give a shard read replicas
// besides its owner, each write-only (joining or leaving: it takes the
// deletes of every write, serves no read) or serving (reads spread over
// the owner and its serving replicas). A shard never has replicas and a
// move at once. The control plane steps a replica write-only → serving →
// write-only → gone, each step once every proxy applied the one before,
// the same wait as a move's phases.
//
// Nothing here starts goroutines or keeps state between calls.
package shardmap
