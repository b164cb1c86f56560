// Package bench is the root of strata's benchmark tree. It holds no code of
// its own; the work is split by what flows through it:
//
//   - workload: seeded, deterministic request generators (Zipf popularity over
//     key families, size distributions, several clusters over a shared key
//     space, read/write mix, TTLs) described by TOML profiles;
//   - driver: the load generator that turns a workload into memcached text
//     protocol traffic over TCP, closed loop (connections × pipeline depth) or
//     open loop (a target rate, latency measured from the intended send time);
//   - compare: starts memcached, twemproxy and strata side by side on loopback
//     and drives the same workload at each;
//   - longtail: the in-process experiment that sets L1-only clusters against
//     thin L1s over one shared L2 for the same memory;
//   - allocator: Shard Manager's allocator stress test against the
//     placement package, and static rendezvous against load-aware
//     placement on the same skewed shard loads;
//   - locality: three regions of strata processes with a WAN injected by
//     in-process toxiproxy, static placement against full replication
//     against strata's μ-shard placement over a simulated day;
//   - proc: the child processes (memcached, twemproxy, etcd, strata) the
//     experiments start and stop;
//   - cli: `strata bench`, the verbs' flags mapped onto those packages'
//     configs; the binary registers it.
//
// Nothing in the product (proxy, tiers, sampler, placement, control) imports
// bench; bench may import tiers to run experiments on strata's own stores.
package bench
