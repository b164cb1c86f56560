// Package nutcrackertest starts a real twemproxy (nutcracker) for tests, on
// free loopback ports, and stops it when the test ends.
//
// The compat layouts are checked against the program our users run, not a
// model of it: a test writes keys through nutcracker and then asks each
// memcached which keys it holds. A machine without nutcracker fails the
// test naming the Debian package; outside CI, STRATA_SKIP_NUTCRACKER=1
// skips instead (internal/testbin).
package nutcrackertest
