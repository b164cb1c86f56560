// Package compare measures strata side by side with the servers people would
// otherwise run: memcached itself and twemproxy (nutcracker) over memcached,
// against single-tier strata over the same kind of memcached, L1/L2 strata
// over two memcached, and strata on its embedded tiers.
//
// Flow: Run resolves every binary first (a missing one is an error naming
// it), then for each target starts its processes on free loopback ports,
// waits until the front one answers a get, drives the workload at each
// pipeline depth with the driver, and stops the processes before the next
// target starts, so only one target uses the CPUs at a time. The CPU time of
// the process under test and of its memcached backends is read from
// /proc/PID/stat just before and just after each measured phase. Optional
// passes: Idle (CPU and wakeups with no clients) and IdleConns (resident
// memory with that many idle connections) run on each target before its
// load; OpenLoad, after every target's closed-loop measurement, starts each
// target again and drives it open loop at fractions of the slowest one's
// ops/s, in interleaved rounds, keeping medians.
//
// Ownership: the launcher owns every child process and stops all of them
// when Run returns, whether it succeeds, fails or is cancelled (SIGTERM, then
// SIGKILL after two seconds). Children run in their own process group and,
// on Linux, die with this process if it is killed outright. Linux only in
// practice: CPU accounting reads /proc.
package compare
