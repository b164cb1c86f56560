package main

// defaultConfigFile is what `strata config default` prints: every key with
// its default value, and the alternatives commented out. Loading it gives
// exactly the configuration of `strata serve` without a file (a test holds
// it to that).
const defaultConfigFile = `# strata configuration.
#
# Sizes are written "64MiB", "1GiB", "512KiB" (powers of 1024) or "100MB"
# (powers of 1000); durations "60s", "250ms", "1h30m". Unknown keys are
# errors. Command-line flags override the keys they name. SIGHUP re-reads
# this file: promotion, sampler rate, log level, the admin token and pool
# server lists change live; the rest is reported and waits for a restart.

[server]
# The memcached endpoint clients connect to (flag --listen).
listen = "127.0.0.1:11211"
# This proxy's cluster (its L1) and region (its L2); recorded in every
# sample (flags --cluster, --region).
cluster = "local"
region = "local"
# Event loops; 0 means one per CPU.
loops = 0
# On SIGTERM or SIGINT, how long in-flight requests may take to complete.
drain_timeout = "10s"

# The L1 tier: thin, per cluster, holds only hot keys. A tier is
#   embedded:   memory = "64MiB"                        (in-process store)
#   memcached:  servers = ["10.0.0.1:11211", { addr = "10.0.0.2:11211", weight = 2 }]
#   none:       kind = "none"                           (single-tier proxy; l1 only)
# kind may be left out: servers make a memcached pool, otherwise embedded.
# Flag --l1 host:port,...|none|embedded replaces this section's tier.
[l1]
kind = "embedded"
memory = "64MiB"
# The longest a promoted copy lives in L1; bounds how stale another
# cluster's L1 can be after a write.
max_ttl = "60s"
# Options of a memcached pool, with their defaults:
# timeout = "250ms"          # the wait for one reply
# dial_timeout = "1s"        # connecting to a server
# failure_threshold = 3      # failures in a row that mark a server down
# probe_interval = "1s"      # how often a down server is probed
# rehash_on_down = false     # move a down server's keys onto the others
# shards = 4096              # keys hash into this many shards; the same
#                            # for every strata of a region
# managed = false            # the control plane publishes the shard map;
#                            # servers is then membership only, and a
#                            # reload never replaces a published map

# The L2 tier: fat, per region, holds the long tail. Same keys as [l1]
# except max_ttl; it cannot be none (flag --l2 host:port,...|embedded).
[l2]
kind = "embedded"
memory = "1GiB"

[promotion]
# An L2 hit is copied into L1 with probability 1/threshold; 1 promotes
# every hit (flag --promotion-threshold).
threshold = 32
# Per-prefix thresholds; the longest matching prefix wins.
# [[promotion.rule]]
# prefix = "photos:"
# threshold = 64

[hotkeys]
# Keys written (counters, lists) or read too often for one server, split
# over K sub-keys or L1 copies. Reads of a counter or list key always add
# up every part, so splitting starts and stops without losing updates.
# An adaptive rule splits only the keys its detector measures at or above
# rate accesses per second (writes for counter and list, reads for read),
# and unsplits a key hold after it last measured hot.
rate = 1000
hold = "1m0s"
# The detector: its decay, the keys each event loop tracks, and the share
# of accesses it looks at (one in sample).
half_life = "5s"
counters = 512
sample = 4
# [[hotkeys.rule]]
# prefix = "votes:"
# kind = "counter"           # counter: incr/decr split, get sums the parts
#                            # list: append/prepend split, get concatenates
#                            # read: K copies in L1, writes delete them all
# split = 8                  # K, 2 to 64
# adaptive = false           # true: split only the keys measured hot
# gets and cas on a split counter or list answer CLIENT_ERROR.

[sampler]
# A key is sampled iff xxhash(key) mod rate == 0, and then every access to
# it is recorded; 0 turns sampling off (flag --sample-rate).
rate = 1000000
# Directory of the sample log (JSON Lines); empty writes none (flag
# --sample-dir).
dir = ""
# Rotate a log file at this uncompressed size or age.
rotate_size = "64MiB"
rotate_age = "1h"
gzip = false
# Span of the live per-family aggregates (GET /admin/v1/sampler/report).
window = "1h"
# Key family rules, tried in order before the default normalisation
# (digit runs become {N}, long hex runs {H}); family may use $1 or ${name}.
# [[sampler.family]]
# match = '^(\w+):session:'
# family = "$1:session:*"

[limits]
# The largest item accepted, as memcached's -I.
max_item_size = "1MiB"
# Requests parsed but not yet answered, per client connection.
max_inflight = 1024
# Replies buffered for a client that does not read them.
max_outbound_bytes = "4MiB"
# flush_all empties both tiers. Default: allowed when both are embedded
# (this process owns that data, as a memcached owns its own), refused as
# memcached -F does when either is a memcached pool, whose servers other
# clients may share. Set true or false to decide either way.
# flush_all = false

[log]
# text or json; debug, info, warn or error (flag --log-level).
format = "text"
level = "info"

[admin]
# The admin HTTP API, metrics and web page (flag --admin). An address
# other than loopback is refused unless token_file is set.
listen = "127.0.0.1:11299"
# A file holding the bearer token every /admin/v1 request must present
# (flag --admin-token-file). Empty: no token.
token_file = ""
# Without a token, only requests whose Host header is a loopback address
# or localhost are served (a web page cannot reach the API through a name
# it made resolve to 127.0.0.1). Other names to accept, without port:
allowed_hosts = []

[control]
# The control plane: the shard-assignment loop of every tier with
# managed = true, run when this section is present. Its state lives in etcd (client addresses host:port), or
# in this process's memory when etcd is empty (a strata alone).
etcd = []
# Campaign to lead the managed tiers' loops. Set false on the strata serve
# of a fleet whose loops run in strata control processes.
leader = true
# The liveness lease of this process's rows and candidacy (whole seconds):
# a dead strata stops holding moves back this long after it died.
session_ttl = "5s"
# How often each strata ships per-shard load and the servers it cannot
# reach.
report_interval = "2s"
# The leader probes every server this often, each probe bounded by
# probe_timeout, and runs one round after each.
probe_interval = "500ms"
probe_timeout = "300ms"
# A server whose probe fails this long, and that at least half of the
# strata cannot reach, is declared dead and its shards fail over at once
# (detection plus one probe interval, at most).
detection = "2s"
# Periodic mode: rebalance by measured load this often.
rebalance_interval = "1m"
# How long a moved shard's new owner fills misses from the old one. A move
# then settles for at least the pools' fill lease (5s) before it is final.
grace = "10s"
# The most shards one periodic batch moves, and the most replicas one
# scaling round adds or drops; 0: no cap.
max_moves = 256
# Shard scaling: every rebalance_interval, a shard whose reads per
# replica exceed the band's high end gains a read replica on another
# server (reads spread over the owner and its replicas; every write goes
# to the owner and deletes at each replica), and one whose reads would
# stay at or below the low end with one replica fewer loses one. Reads/s
# per replica, [low, high], low < high/2.
replica_band = [5000.0, 20000.0]
# The most servers one shard's reads spread over, owner included; 1 turns
# scaling off.
max_replicas = 1

# Locality routing: keys carry a μ-shard id (by the rules below), each
# μ-shard is owned by one region, a request for a μ-shard owned elsewhere
# is forwarded over that region's link, and a placement service migrates
# μ-shards to the region that uses them most. Off unless the [locality]
# section is present. Its state (location table, counters, the placement
# service's election) lives in the store of [control]: etcd for a fleet of
# regions, this process's memory without one (a region alone). The
# placement service runs in any strata whose control.leader is true, and
# in strata control; one is active at a time.
# [locality]
# This strata's region; defaults to server.region and must agree with it.
# region = "a"
# The region link: a second memcached (meta protocol) listener of this
# process that other regions forward requests to. A request that arrives
# on it is served here and never forwarded again.
# link_listen = "127.0.0.1:11311"
# The placement policy. A μ-shard may move migrate_after after its first
# remote access, and at most once per min_interval. Every value of a
# μ-shard key lives at most max_ttl (a longer or no TTL is clamped), and
# min_interval must be at least max_ttl: a μ-shard returns to a region
# only after every value it left there has expired.
# migrate_after = "10m"
# min_interval = "6h"
# max_ttl = "6h"
# How long a request may wait for its μ-shard's location (a store read,
# off the request path) and for the owner's answer over its link before
# the owner counts as unreachable: a read then misses, a write answers
# SERVER_ERROR. Size it for the WAN.
# forward_timeout = "1s"
# How long a migrated μ-shard's new owner fills its misses from the old
# one, and deletes there what it writes (at most max_ttl).
# grace = "30s"
# Access counters: shipped to the placement service this often; their
# weight halves every half_life.
# counter_interval = "1s"
# half_life = "1h"
# A strata that has lost the store (etcd) keeps serving its region's
# μ-shards on the locations it knows for fence_after, then answers them
# as for an unreachable owner (reads miss, writes SERVER_ERROR) until it
# is back and has caught up; forwarded requests go on (their owner checks
# the epoch). The placement service waits as long after a strata's lease
# ends before a move stops waiting for it, so a strata cut off from etcd
# alone never serves a μ-shard that moved away meanwhile. A whole-fleet
# etcd outage shorter than fence_after is served throughout. "0s" turns
# the fence off: every outage is served, and a strata cut off alone may
# then return stale values after a move. The same in every strata.
# fence_after = "30s"
# The global migration cap: a token bucket of rate per second, burst deep.
# rate = 10
# burst = 100
# Every strata reports its region's cache memory: memcached's bytes over
# limit_maxbytes, summed over the region's L2 servers (an embedded L2:
# its bytes over its budget). A full cache evicts, so the placement
# service moves no μ-shard into a region at or above this fraction; pins
# and manual moves still go there. When every region is above it, it
# steers nothing (moves go on as if no region were full). In (0, 1];
# 1: only a completely full region.
# capacity_ceiling = 0.9
# Location cache entries per event loop.
# cache_capacity = 65536
# Where locality routing keeps its rows in the store (under the store's
# own namespace, "strata/" in etcd). Every strata of a fleet uses the same.
# store_prefix = "locality/"
# Mutual TLS on the region links: this strata's certificate and key (PEM;
# presented to the peers both as a server and as a client) and the CA that
# signs every region's. All three or none; none: plain TCP, so bind
# link_listen to an address only the other regions reach.
# link_cert = ""
# link_key = ""
# link_ca = ""
# Every other region and its link address (the same list in every region).
# [[locality.peer]]
# region = "b"
# link = "10.1.0.5:11311"
# Rules: the longest matching prefix claims a key; one of
#   tag = true                      "u:{42}:profile" -> 42
#   delimiter = ":" and field = 1   "u:42:profile"   -> 42 (fields from 0)
#   regex = '^u:(\d+):'             its one capture group
# Keys no rule claims are served locally, as without [locality].
# pin = "b" keeps every μ-shard of a rule in one region (a μ-shard's own
# pin, set through the admin API, wins); it is applied at start.
# [[locality.rule]]
# prefix = "u:"
# tag = true
# pin = ""
`
