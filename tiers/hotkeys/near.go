package hotkeys

import (
	"sync"

	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/fillguard"
)

// The near cache (Rule.Near): values of hot read keys kept in this
// process, so that a get of one costs no round trip.
//
// Invariants:
//   - it holds only keys of the latest hot set (decideNear over the
//     loops' views): a scan drops the others, and a value is only put in
//     while its key is in the set;
//   - an entry lives at most its rule's Near;
//   - a write of the key through this strata drops the entry once the
//     tier of record acknowledged it, before the write is answered, and a
//     value read before that write is never put in after it (the key's
//     fillguard generation, checked under the lock that drop takes);
//   - keys and values together stay within Config.NearBytes.
//
// A write through another strata is seen once the entry expires: Near
// bounds that staleness, as L1MaxTTL bounds the L1 copies'.

// nearOverhead is what an entry costs beyond its key and value.
const nearOverhead = 64

type nearEntry struct {
	value   []byte // immutable once put in
	flags   uint32
	expires int64
}

type nearCache struct {
	max int64

	mu      sync.Mutex // guards every field below
	entries map[string]*nearEntry
	hot     map[string]bool // the hot set; nil: none
	bytes   int64
	epoch   uint64 // bumped by flush_all: puts read before are refused
}

func newNearCache(max int64) *nearCache {
	return &nearCache{max: max, entries: map[string]*nearEntry{}}
}

func entryBytes(key string, e *nearEntry) int64 {
	return int64(len(key) + len(e.value) + nearOverhead)
}

// get serves op from the cache if it holds a live entry of its key. On a
// miss, hot says whether the key is in the hot set (only then may the
// read put its value in) and epoch is the flush epoch for its ticket.
func (n *nearCache) get(op *tiers.Op, now int64) (hit, hot bool, epoch uint64) {
	n.mu.Lock()
	e := n.entries[string(op.Req.Key)]
	if e == nil || now >= e.expires {
		hot, epoch = n.hot[string(op.Req.Key)], n.epoch
		n.mu.Unlock()
		return false, hot, epoch
	}
	res := &op.Res
	v := res.Value[:0]
	res.Reset()
	res.Status = tiers.StatusHit
	res.Value = append(v, e.value...)
	res.ClientFlags = e.flags
	n.mu.Unlock()
	res.Size = len(res.Value)
	res.Level = 1
	return true, true, 0
}

// nearTicket is what a read took at its start, to put its value in.
type nearTicket struct {
	slot  *fillguard.Slot // nil: the read puts nothing in
	g0    uint64
	epoch uint64
	ttl   int64 // the rule's Near, nanoseconds
}

// put keeps value for key until now + ttl, unless a write or flush came
// since the read began, the key left the hot set, or there is no room
// once expired entries are gone. It reports whether it kept the value.
func (n *nearCache) put(key, value []byte, flags uint32, now int64, tk nearTicket) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if tk.epoch != n.epoch || tk.slot.Snapshot() != tk.g0 || !n.hot[string(key)] {
		return false
	}
	e := &nearEntry{value: append([]byte(nil), value...), flags: flags, expires: now + tk.ttl}
	if old := n.entries[string(key)]; old != nil {
		n.bytes -= entryBytes(string(key), old)
		delete(n.entries, string(key))
	}
	cost := entryBytes(string(key), e)
	if n.bytes+cost > n.max {
		for k, o := range n.entries {
			if now >= o.expires {
				n.bytes -= entryBytes(k, o)
				delete(n.entries, k)
			}
		}
		if n.bytes+cost > n.max {
			return false
		}
	}
	n.entries[string(key)] = e
	n.bytes += cost
	return true
}

// drop removes key's entry; it reports whether there was one.
func (n *nearCache) drop(key []byte) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	e := n.entries[string(key)]
	if e == nil {
		return false
	}
	n.bytes -= entryBytes(string(key), e)
	delete(n.entries, string(key))
	return true
}

// flush drops everything (flush_all) and refuses the puts of reads begun
// before.
func (n *nearCache) flush() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.epoch++
	clear(n.entries)
	n.bytes = 0
}

// setHot installs the hot set and drops the entries of keys outside it.
func (n *nearCache) setHot(hot map[string]bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.hot = hot
	for k, e := range n.entries {
		if !hot[k] {
			n.bytes -= entryBytes(k, e)
			delete(n.entries, k)
		}
	}
}

// decideNear is the near cache's hot set, a pure function: the keys under
// a read rule with Near whose reads reach rate, as an adaptive rule's
// keys are marked (static rules too: near is for detected hot keys only).
func decideNear(keys []keyRates, rs *ruleSet, rate float64) map[string]bool {
	var out map[string]bool
	for _, k := range keys {
		r := rs.match([]byte(k.key))
		if r == nil || r.Kind != KindRead || r.Near == 0 || k.reads < rate {
			continue
		}
		if out == nil {
			out = map[string]bool{}
		}
		out[k.key] = true
	}
	return out
}
