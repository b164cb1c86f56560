package memcached

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// secondProxy is another pool over mp's servers, with mp's map applied:
// a second proxy, whose event loop the test drives apart from mp's.
func secondProxy(t *testing.T, mp *movePair) *harness {
	h := newHarness(t, Config{
		Servers: []Server{{Addr: mp.a.Addr}, {Addr: mp.b.Addr}}, Shards: moveShards, Managed: true,
		RequestTimeout: 10 * time.Second, FailureThreshold: 100, ProbeInterval: 20 * time.Millisecond,
	}, 0)
	m := mp.pool.route.Load().m
	if err := h.pool.ApplyTopology(shardmap.Topology{Map: m}); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestWriteRacingFillAcrossProxies drives a write of one proxy and a fill
// of another into the interleaving that matters during a handoff: the
// write has run at one server and not yet at the other when the fill
// takes its lease at B, reads A and stores. Proxy 1's loop is not driven
// while proxy 2 fills, so its second sub-request waits exactly there.
// Once the write is acknowledged, no read may return A's old value. The
// write must therefore run at A first: run at B first, a delete, or a
// set whose value is gone at once (already expired), leaves nothing at B
// to fail the fill's store.
func TestWriteRacingFillAcrossProxies(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write tiers.Request
	}{
		{"delete", del("k")},
		{"set already expired", tiers.Request{Kind: tiers.KindSet, Key: []byte("k"), Value: []byte("new"), TTL: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mp := newMovePair(t)
			mp.phase(shardmap.MoveHandoff)
			other := secondProxy(t, mp)
			// Both proxies connected to both servers.
			mp.one(set("warm", "x"))
			other.one(set("warm", "x"))
			setAt(t, mp.a.Addr, "k", "old")
			setAt(t, mp.b.Addr, "k", "old") // an earlier fill's copy

			w := newCall(tc.write)
			mp.pool.Do(&w.op)
			mp.pool.FlushLoop(0)
			// Wait until the write has run at its first end, whichever
			// that is: both servers held "old", and the write removes it.
			deadline := time.Now().Add(10 * time.Second)
			for valueAt(t, mp.a.Addr, "k") == "old" && valueAt(t, mp.b.Addr, "k") == "old" {
				if time.Now().After(deadline) {
					t.Fatal("the write reached neither server")
				}
			}
			r := other.one(get("k")) // lease at B, read A, fill B
			t.Logf("the racing read: %v %q", r.Status, r.Value)
			mp.wait(w)
			if w.op.Res.Status != tiers.StatusStored {
				t.Fatalf("write: %v %v", w.op.Res.Status, w.op.Res.Err)
			}
			for i, h := range []*harness{mp.harness, other} {
				expect(t, "a read after the acknowledged write, proxy "+string(rune('1'+i)), h.one(get("k")), tiers.StatusMiss, "")
			}
			if got := direct(t, mp.b.Addr, "mg k v\r\n"); !strings.HasPrefix(got, "EN") {
				t.Errorf("b holds %q after the write", got)
			}
		})
	}
}
