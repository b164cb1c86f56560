// Package confimport translates an incumbent's configuration into a strata
// configuration that serves the same keys from the same servers, so a
// fleet can move behind strata warm.
//
// Twemproxy reads nutcracker's YAML and writes strata's TOML: one pool
// becomes a single-tier strata (l1 kind "none") whose L2 is a memcached
// pool with compat = "twemproxy" and the pool's hash, distribution,
// hash_tag, servers (weights and names, in order), timeout and failure
// settings, each with a comment naming the YAML line it came from. What
// strata cannot reproduce (random distribution, redis pools, Unix socket
// servers) is an error, and what has no strata equivalent (backlog,
// preconnect, connection counts) is listed in comments, never dropped
// silently. The translation is a pure function of the file's bytes; the
// command that prints it lives in cmd/strata.
//
// Mcrouter reads mcrouter's JSON (comments allowed, macros not) and writes
// the same single tier with compat = "mcrouter-ch3" or "mcrouter-crc32",
// when the route leads every key to one pool: PoolRoute, HashRoute,
// PrefixSelectorRoute whose branches all reach that pool, FailoverRoute
// (its first child; the others are named in a comment). Any other route
// is an error naming its JSON path.
//
// Errors are "FILE:LINE: key: message", the position of the YAML node at
// fault, or "FILE: $.json.path: message" for mcrouter.
package confimport
