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
// Errors are "FILE:LINE: key: message", the position of the YAML node at
// fault.
package confimport
