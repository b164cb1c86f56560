// Package workload generates benchmark traffic: seeded, deterministic streams
// of memcached requests described by a Profile.
//
// A Profile (TOML, or one of the built-ins) names key families, each with a
// key pattern, a key count, a request weight, a Zipf exponent and
// distributions of key size, value size and TTL; an operation mix; and a
// number of clusters that share the key space with a given overlap. New
// compiles it into an immutable Workload; Workload.Generator hands each load
// goroutine its own Generator, whose Next fills a reusable Request.
//
// Determinism: everything random is drawn from PCG streams seeded by the
// profile's seed and the caller's stream number, and per-key facts (sizes,
// TTL) are hashes of (seed, family, key id). The same profile, seed and
// stream give the same requests on every machine. Nothing here reads the
// clock or global randomness.
//
// Ownership: a Request's Key is rewritten by the next Next call; copy it to
// keep it. Generators are not safe for concurrent use; Workload is.
package workload
