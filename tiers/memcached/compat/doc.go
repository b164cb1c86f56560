// Package compat places keys on a memcached pool exactly as an incumbent
// router or client does, so that strata can serve a fleet those have
// already filled without a miss storm.
//
// A Layout is built once from a Spec (the scheme and its settings) and the
// pool's server list in the incumbent's order; Layout.Server(key) then
// returns the index of the server holding key. Layouts are immutable, safe
// for concurrent use, and Server allocates nothing: it is on the request
// path in place of tiers/shardmap's lookup. A caller holding several keys
// of an MD5 ketama layout may place them together instead (MD5Block,
// MD5Words, ServerOfWord; batch.go), which hashes up to Lanes keys in the
// time of about two.
//
// Schemes, and what each was checked against (tests in this package):
//
//   - twemproxy: distribution ketama or modula (random is refused: its
//     placement is not a function of the key) with any of the twelve
//     hashes of twemproxy's hashkit, weights, server names and hash_tag.
//     Checked against nutcracker 0.5.0 run here: every hash under both
//     distributions with unequal weights, names, and hash tags.
//   - libmemcached-ketama: libmemcached's ketama, unweighted (100 points a
//     server, one per digest of the key hash) or weighted (160 points
//     scaled by weight, four per MD5 digest; on with ketama_weighted, or as
//     soon as a server has a weight above 1, as libmemcached does). Checked
//     against pylibmc over libmemcached 1.0.18.
//   - pymemcache: HashClient's RendezvousHash: the highest murmur3 (x86,
//     32-bit, seeded) of "host:port-key" wins, ties to the larger name.
//     Checked against pymemcache 3.5.
//   - python-memcached: CRC-32 bits 16..30 (0 counts as 1) modulo the
//     bucket list, each server repeated weight times. Checked against
//     python-memcache 1.59.
//   - gomemcache: ServerList.PickServer: CRC-32 (IEEE) modulo the server
//     count. Checked against github.com/bradfitz/gomemcache.
//   - mcrouter-ch3, mcrouter-crc32: mcrouter's Ch3HashFunc (furc hash) and
//     Crc32HashFunc (CRC-32 with its top bit cleared, modulo the count)
//     over a pool's server list. mcrouter does not run here:
//     both are checked against the values mcrouter's own unit tests pin
//     (Ch3HashTest, Crc32HashTest). The key is hashed whole: mcrouter's
//     routing prefix (/region/cluster/) and hash stop are not applied.
//
// What the incumbents do on failure (twemproxy's auto_eject_hosts,
// libmemcached's auto_eject, pymemcache's dead servers, python-memcached's
// rehash) changes placement only while a server is down and is not
// reproduced: a down server fails its keys, or follows the pool's own
// failure settings.
//
// Every hash is written here from its published algorithm, with the
// incumbents' quirks kept where placement depends on them (see hash.go).
package compat
