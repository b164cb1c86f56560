// Package memcachedtest starts real memcached processes for tests, on free
// loopback ports, and stops them when the test ends.
//
// Tests talk to the same memcached our users run; nothing here fakes it. A
// machine without the memcached binary fails the test with a message naming
// the package to install; outside CI, STRATA_SKIP_MEMCACHED=1 skips instead
// (internal/testbin).
package memcachedtest
