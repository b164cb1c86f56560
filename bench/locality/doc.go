// Package locality is `strata bench locality`: three regions on one
// machine, each a strata process with its own memcached L2, one etcd, and
// a WAN between them, compared under three placements of the same
// workload.
//
// # Data flow
//
// Run measures the placements one after the other, so only one
// placement's processes use the CPUs at a time. For each it starts a
// topology (topo.go): an etcd (locality placements), per region a
// memcached and a strata (no L1: the L2's "bytes" statistic is all the
// region caches), and the WAN (links.go): one in-process toxiproxy proxy
// per ordered pair of regions with a latency toxic on each direction (the
// kernel has no netem) and a byte-counting toxic. Each strata's peers'
// link addresses are those proxies. It then prefills the users' data
// where the placement puts it first, runs the simulated day (day.go, a
// pure function of user, time of day and a seeded source) with every
// region's clients talking to their own strata only (client.go), reads
// strata's /metrics at the edges of the steady windows and at the ends of
// the day, memcached's stats, and the proxies' byte counts, and stops
// everything.
//
// # Placements
//
//   - static: locality on, each μ-shard created in the region its name
//     hashes to (the prefill writes it from there) and then pinned there
//     through the admin API (PUT .../mushards/{id}/pin), so the placement
//     service never moves it.
//   - full_replication: locality off; every region caches every key (the
//     prefill writes each key in every region); a client's write sets the
//     key at home and deletes it in the other two regions through the
//     WAN proxies before it counts as done, then caches the new value
//     there again (Config.FullWrites: "refill"; "delete" leaves a region
//     to re-cache on its own clients' misses, "set" replaces the value
//     instead of deleting it).
//   - strata: locality on, μ-shards created at their users' home, the
//     placement service migrating them; migrate_after, min_interval and
//     max_ttl scaled to the day (Config).
//
// # Simulation
//
// Simulate (sim.go, `--simulate`) starts no process: it drives the
// placement leader (placesvc.Leader on an in-memory store) and one
// locsvc.Tally per region, each interval's counts encoded and decoded as
// shipped, over a seeded workload in virtual time. Requests are drawn per
// μ-shard and interval, not one by one, on the calling goroutine; each
// region then counts and ships its interval on a goroutine of its own
// (simregion.go), and the leader takes the batches on the calling
// goroutine alone, so its CPU time is its own.
//
// # Ownership
//
// Run owns every process and proxy of a placement and stops them before
// the next placement starts, and before it returns, whatever happened. It
// also owns the client goroutines (one per connection) and waits for
// them; a worker's tally belongs to it until the day ends, when Run merges
// them.
package locality
