// Package proc starts and stops the child processes of the benchmarks
// (memcached, twemproxy, etcd, strata itself) on loopback ports.
//
// Ownership: whoever calls Start owns the Process and must Stop it; Stop is
// idempotent and bounded (SIGTERM, then SIGKILL after two seconds). A child
// runs in its own process group, so a terminal's Ctrl-C reaches only the
// benchmark, which then stops its children itself, and on Linux the kernel
// kills the child if the benchmark dies outright. One goroutine per Process
// waits for the child and closes Exited; it ends when the child does.
//
// A child's output is kept (its first and last 16 KiB) to explain a
// failure: DescribeExit names the panic or fatal line it printed.
package proc
