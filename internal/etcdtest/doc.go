// Package etcdtest starts real etcd servers for tests, on free loopback
// ports with a temporary data directory, and stops them when the test
// ends. It can kill -9, restart, freeze (SIGSTOP) and thaw a server, and
// put a TCP proxy between a client and the server that a test can cut and
// heal, to disconnect one client while the others stay connected.
//
// Tests talk to the etcd our users run (Debian's etcd-server); nothing
// here fakes it. A machine without the etcd binary fails the test with a
// message naming the package to install. Outside CI (CI is not "true"),
// STRATA_SKIP_ETCD=1 turns that failure into a skip.
//
// Goroutines: each Server owns one goroutine per running process (waiting
// for its exit); each Proxy owns its accept loop and two copy goroutines
// per connection. t.Cleanup stops them all.
package etcdtest
