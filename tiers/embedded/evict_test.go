package embedded

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/strata-cache/strata/tiers"
)

// itemKV builds the i-th key and a value that together cost exactly 200
// bytes of data.
func itemKV(i int) (string, string) {
	k := fmt.Sprintf("k%03d", i)
	return k, strings.Repeat("v", 200-len(k))
}

const testItemCost = 200 + ItemOverhead

func TestEvictsLeastRecentlyUsed(t *testing.T) {
	s := newStore(t, Config{MaxBytes: 10 * testItemCost, MaxItemSize: 1024, Shards: 1})
	for i := 0; i < 10; i++ {
		k, v := itemKV(i)
		do(s, setReq(k, v))
	}
	if st := s.Stats(); st.CurrItems != 10 || st.Evictions != 0 || st.Bytes != 10*testItemCost {
		t.Fatalf("full store: %+v", st)
	}
	// Reading k000 and k002 makes k001 and k003 the oldest; a u read does
	// not count.
	do(s, getReq("k000"))
	do(s, getReq("k002"))
	do(s, tiers.Request{Kind: tiers.KindGet, Key: []byte("k001"), NoBump: true})
	for i := 10; i < 12; i++ {
		k, v := itemKV(i)
		do(s, setReq(k, v))
	}
	present := func(k string) bool { return do(s, getReq(k)).Status == tiers.StatusHit }
	for _, k := range []string{"k001", "k003"} {
		if present(k) {
			t.Errorf("%s survived; it was least recently used", k)
		}
	}
	for _, k := range []string{"k000", "k002", "k004", "k010", "k011"} {
		if !present(k) {
			t.Errorf("%s was evicted", k)
		}
	}
	st := s.Stats()
	if st.Evictions != 2 || st.EvictedUnfetched != 2 || st.Bytes > 10*testItemCost {
		t.Fatalf("after evictions: %+v", st)
	}
}

func TestExpiredItemsGoBeforeLiveOnes(t *testing.T) {
	clk := newClock(clockStart)
	s := newStore(t, Config{MaxBytes: 10 * testItemCost, MaxItemSize: 1024, Shards: 1, Now: clk.Now})
	for i := 0; i < 10; i++ {
		k, v := itemKV(i)
		req := setReq(k, v)
		if i < 3 {
			req.TTL = 100 // the three oldest are about to die
		}
		do(s, req)
	}
	clk.advance(100)
	for i := 10; i < 13; i++ {
		k, v := itemKV(i)
		do(s, setReq(k, v))
	}
	st := s.Stats()
	if st.Evictions != 0 || st.Reclaimed != 3 || st.ExpiredUnfetched != 3 || st.CurrItems != 10 {
		t.Fatalf("stats %+v", st)
	}
}

// Random sizes, random keys, many shards: the charge never goes over any
// shard's budget, and the shards' charges always add up to Stats.Bytes.
func TestBytesNeverExceedMaxBytes(t *testing.T) {
	const maxBytes = 256 << 10
	s := newStore(t, Config{MaxBytes: maxBytes, MaxItemSize: 8 << 10, Shards: 4})
	r := rand.New(rand.NewPCG(7, 7))
	val := strings.Repeat("x", 8<<10)
	for i := 0; i < 20000; i++ {
		key := fmt.Sprintf("key-%d", r.IntN(3000))
		switch r.IntN(4) {
		case 0:
			do(s, tiers.Request{Kind: tiers.KindSet, Mode: tiers.ModeAppend, Key: []byte(key), Value: []byte(val[:r.IntN(500)])})
		case 1:
			do(s, tiers.Request{Kind: tiers.KindDelete, Key: []byte(key)})
		default:
			do(s, setReq(key, val[:r.IntN(8000)]))
		}
		if i%100 == 0 {
			var sum int64
			for j := range s.shards {
				sh := &s.shards[j]
				sh.mu.Lock()
				if sh.bytes > sh.budget {
					t.Fatalf("shard %d holds %d bytes over its budget %d", j, sh.bytes, sh.budget)
				}
				var linked int64
				for n := sh.head; n != nilIdx; n = sh.entries[n].next {
					linked += sh.entries[n].cost()
				}
				if linked != sh.bytes {
					t.Fatalf("shard %d charges %d bytes but its LRU holds %d", j, sh.bytes, linked)
				}
				sum += sh.bytes
				sh.mu.Unlock()
			}
			if st := s.Stats(); int64(st.Bytes) != sum || st.Bytes > maxBytes {
				t.Fatalf("Stats.Bytes %d, shards %d, max %d", st.Bytes, sum, maxBytes)
			}
		}
	}
	if s.Stats().Evictions == 0 {
		t.Fatal("the workload never filled the store")
	}
}

func TestFlushAllReleasesMemory(t *testing.T) {
	s := newStore(t, Config{})
	for i := 0; i < 1000; i++ {
		k, v := itemKV(i)
		do(s, setReq(k, v))
	}
	do(s, tiers.Request{Kind: tiers.KindFlush})
	if st := s.Stats(); st.CurrItems != 0 || st.Bytes != 0 || st.Reclaimed != 1000 {
		t.Fatalf("after flush_all: %+v", st)
	}
	do(s, setReq("new", "v"))
	if res := do(s, getReq("new")); string(res.Value) != "v" {
		t.Fatalf("store after flush: %+v", res)
	}
}

// ItemOverhead is meant to cover what an item costs beyond its key and
// value bytes. Measure it: the heap taken by n small items, minus their
// data buffers, divided by n, at two points of the tables' growth.
func TestItemOverheadCoversHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a few hundred MB")
	}
	for _, n := range []int{50_000, 200_000} {
		keys := make([][]byte, n)
		for i := range keys {
			keys[i] = []byte(fmt.Sprintf("key:%012d", i)) // 16 bytes
		}
		value := []byte("0123456789abcdef") // key+value fill one 32-byte size class
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := newStore(t, Config{MaxBytes: 1 << 30})
		for _, k := range keys {
			do(s, tiers.Request{Kind: tiers.KindSet, Key: k, Value: value})
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perItem := (float64(after.HeapAlloc) - float64(before.HeapAlloc) - float64(n)*32) / float64(n)
		t.Logf("%d items: heap per item beyond key and value %.1f bytes (charged %d)", n, perItem, ItemOverhead)
		if perItem > ItemOverhead {
			t.Errorf("%d items: an item costs %.1f bytes beyond its data, more than the %d charged", n, perItem, ItemOverhead)
		}
		runtime.KeepAlive(s)
	}
}
