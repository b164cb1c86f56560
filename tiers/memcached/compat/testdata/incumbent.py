"""Writes keys through a Python memcached client, for the compat tests.

Usage: incumbent.py MODE SERVERS < keys
MODE: pylibmc-ketama[-HASH] | pylibmc-ketama_weighted | pymemcache[:SEED] |
      python-memcached
SERVERS: host:port:weight,... in the client's order. One key a line on
standard input; each is set to "v". Exits non-zero if any set fails.
"""
import functools
import sys

mode, spec = sys.argv[1], sys.argv[2]
servers = [s.rsplit(":", 2) for s in spec.split(",")]
keys = sys.stdin.read().split("\n")[:-1]

if mode.startswith("pylibmc-"):
    import pylibmc
    dist, _, hash_name = mode[len("pylibmc-"):].partition("-")
    behaviors = {dist: True}
    if hash_name:
        behaviors["hash"] = hash_name
    mc = pylibmc.Client(["%s:%s:%s" % tuple(s) for s in servers], behaviors=behaviors)
    setter = mc.set
elif mode.startswith("pymemcache"):
    from pymemcache.client.hash import HashClient
    from pymemcache.client.rendezvous import RendezvousHash
    seed = int(mode.partition(":")[2] or 0)
    mc = HashClient([(h, int(p)) for h, p, _ in servers],
                    hasher=functools.partial(RendezvousHash, seed=seed))
    setter = functools.partial(mc.set, noreply=False)
elif mode == "python-memcached":
    import memcache
    mc = memcache.Client([("%s:%s" % (h, p), int(w)) for h, p, w in servers])
    setter = mc.set
else:
    sys.exit("unknown mode " + mode)

failed = [k for k in keys if not setter(k, "v")]
if failed:
    sys.exit("%d sets failed, first %r" % (len(failed), failed[0]))
