package memcached

import (
	"fmt"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/tiers"
)

// TestShardLoad: every request counts once in its shard, with its key and
// value bytes sent and the value bytes its reply carried, summed over the
// loops it was issued on; flush_all counts in no shard.
func TestShardLoad(t *testing.T) {
	m := memcachedtest.Start(t)
	l := newTestLoops(2)
	p, err := New(Config{Servers: []Server{{Addr: m.Addr}}, Shards: 32, RequestTimeout: 5 * time.Second}, l)
	if err != nil {
		t.Fatal(err)
	}
	l.start()
	t.Cleanup(func() { _ = p.Close() })
	// A snapshot taken into longer slices with counts in them is sized to
	// the pool and starts from zero.
	got := ShardLoad{Requests: make([]uint64, 40), Bytes: make([]uint64, 40), Reads: make([]uint64, 40)}
	got.Requests[0], got.Bytes[1], got.Reads[2] = 7, 7, 7
	if p.ShardLoad(&got); len(got.Requests) != 32 || len(got.Bytes) != 32 || len(got.Reads) != 32 {
		t.Fatalf("snapshot sized %d/%d/%d, want 32", len(got.Requests), len(got.Bytes), len(got.Reads))
	}
	if got.Requests[0]+got.Bytes[1]+got.Reads[2] != 0 {
		t.Fatalf("snapshot of an unused pool kept earlier counts: %v %v %v", got.Requests[:3], got.Bytes[:3], got.Reads[:3])
	}

	wantReq := make([]uint64, 32)
	wantBytes := make([]uint64, 32)
	var calls []*call
	issue := func(loop int, r tiers.Request, replyBytes int) {
		c := newCall(r)
		c.op.Loop = loop
		calls = append(calls, c)
		p.Do(&c.op)
		sh := p.ShardOf(r.Key)
		wantReq[sh]++
		wantBytes[sh] += uint64(len(r.Key) + len(r.Value) + replyBytes)
	}
	for i := 0; i < 40; i++ {
		key, val := fmt.Sprint("load:", i), fmt.Sprint("value-", i*i)
		issue(i%2, set(key, val), 0)
	}
	for _, c := range calls {
		p.FlushLoop(c.op.Loop)
	}
	l.until(t, 10*time.Second, "sets", func() bool { return allDone(calls) })
	for _, c := range calls {
		if c.op.Res.Status != tiers.StatusStored {
			t.Fatalf("set %s: %v %v", c.op.Req.Key, c.op.Res.Status, c.op.Res.Err)
		}
	}
	calls = calls[:0]
	for i := 0; i < 40; i++ {
		key := fmt.Sprint("load:", i)
		issue((i+1)%2, get(key), len(fmt.Sprint("value-", i*i))) // hits
		issue(i%2, get(key+":absent"), 0)                        // misses
	}
	p.FlushLoop(0)
	p.FlushLoop(1)
	l.until(t, 10*time.Second, "gets", func() bool { return allDone(calls) })
	for _, c := range calls {
		if c.op.Res.Status == tiers.StatusError {
			t.Fatalf("%s: %v", c.op.Req.Key, c.op.Res.Err)
		}
	}
	flush := newCall(tiers.Request{Kind: tiers.KindFlush})
	p.Do(&flush.op)
	p.FlushLoop(0)
	l.until(t, 10*time.Second, "flush_all", func() bool { return flush.done })

	p.ShardLoad(&got)
	for sh := range wantReq {
		if got.Requests[sh] != wantReq[sh] || got.Bytes[sh] != wantBytes[sh] {
			t.Errorf("shard %d: %d requests, %d bytes; want %d, %d", sh, got.Requests[sh], got.Bytes[sh], wantReq[sh], wantBytes[sh])
		}
	}
}

func allDone(cs []*call) bool {
	for _, c := range cs {
		if !c.done {
			return false
		}
	}
	return true
}
