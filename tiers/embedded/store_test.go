package embedded

import (
	"errors"
	"runtime"
	"testing"

	"github.com/strata-cache/strata/tiers"
)

func newStore(t testing.TB, cfg Config) *Store {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func do(s *Store, req tiers.Request) tiers.Result {
	op := tiers.Op{Req: req}
	s.Do(&op)
	return op.Res
}

func setReq(key, value string) tiers.Request {
	return tiers.Request{Kind: tiers.KindSet, Key: []byte(key), Value: []byte(value)}
}

func getReq(key string) tiers.Request {
	return tiers.Request{Kind: tiers.KindGet, Key: []byte(key), WantValue: true}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name       string
		cfg        Config
		wantErr    bool
		wantShards int
	}{
		{name: "defaults", cfg: Config{}, wantShards: 16},
		{name: "L2 size", cfg: Config{MaxBytes: 1 << 30}, wantShards: 256},
		{name: "small store is one shard", cfg: Config{MaxBytes: 2 << 20}, wantShards: 1},
		{name: "tiny store gets a smaller item limit", cfg: Config{MaxBytes: 1 << 20}, wantShards: 1},
		{name: "tiny sharded store", cfg: Config{MaxBytes: 1 << 20, Shards: 4}, wantShards: 4},
		{name: "explicit shards", cfg: Config{MaxBytes: 64 << 20, Shards: 4}, wantShards: 4},
		{name: "negative bytes", cfg: Config{MaxBytes: -1}, wantErr: true},
		{name: "item size below memcached's floor", cfg: Config{MaxItemSize: 100}, wantErr: true},
		{name: "shards not a power of two", cfg: Config{Shards: 3}, wantErr: true},
		{name: "shard smaller than an item", cfg: Config{MaxBytes: 4 << 20, MaxItemSize: 1 << 20, Shards: 4}, wantErr: true},
		{name: "store smaller than an item", cfg: Config{MaxBytes: 1000, MaxItemSize: 1024}, wantErr: true},
		{name: "store smaller than the smallest item", cfg: Config{MaxBytes: 1000}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			err := cfg.validate()
			if tc.wantErr {
				if !errors.Is(err, ErrInvalidConfig) {
					t.Fatalf("err = %v, want ErrInvalidConfig", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Shards != tc.wantShards {
				t.Errorf("Shards = %d, want %d", cfg.Shards, tc.wantShards)
			}
			if cfg.MaxBytes/int64(cfg.Shards) < int64(cfg.MaxItemSize)+ItemOverhead {
				t.Errorf("shard budget %d cannot hold a maximum item", cfg.MaxBytes/int64(cfg.Shards))
			}
			if cfg.Now == nil || cfg.MaxItemSize == 0 {
				t.Error("defaults not filled")
			}
		})
	}
}

func TestDoCallsDoneOnceBeforeReturning(t *testing.T) {
	s := newStore(t, Config{})
	calls := 0
	op := &tiers.Op{Req: setReq("k", "v")}
	op.Done = func(got *tiers.Op) {
		if got != op {
			t.Error("Done got another Op")
		}
		if got.Res.Status != tiers.StatusStored {
			t.Errorf("Done saw status %v", got.Res.Status)
		}
		calls++
	}
	s.Do(op)
	if calls != 1 {
		t.Fatalf("Done called %d times", calls)
	}
	op.Done = nil
	op.Req = getReq("k")
	s.Do(op) // must not panic without Done
	if string(op.Res.Value) != "v" {
		t.Fatalf("value %q", op.Res.Value)
	}
}

func TestInvalidRequests(t *testing.T) {
	s := newStore(t, Config{})
	for _, req := range []tiers.Request{
		{Kind: tiers.Kind(99), Key: []byte("k")},
		{Kind: tiers.KindSet, Mode: tiers.ModeIncr, Key: []byte("k")},
		{Kind: tiers.KindArith, Mode: tiers.ModeAppend, Key: []byte("k")},
	} {
		res := do(s, req)
		if res.Status != tiers.StatusError || !errors.Is(res.Err, ErrInvalidRequest) {
			t.Errorf("%+v: status %v err %v", req, res.Status, res.Err)
		}
	}
}

// The result of one op must not leak into the next through a reused Op.
func TestResultIsResetBetweenOps(t *testing.T) {
	s := newStore(t, Config{})
	do(s, setReq("k", "value"))
	do(s, tiers.Request{Kind: tiers.KindDelete, Key: []byte("k"), Invalidate: true})
	op := tiers.Op{Req: getReq("k")}
	s.Do(&op)
	if !op.Res.Win || !op.Res.Stale || string(op.Res.Value) != "value" {
		t.Fatalf("stale get: %+v", op.Res)
	}
	op.Req = getReq("missing")
	s.Do(&op)
	if op.Res.Status != tiers.StatusMiss || op.Res.Win || op.Res.Stale || len(op.Res.Value) != 0 || op.Res.CAS != 0 {
		t.Fatalf("miss after hit kept old fields: %+v", op.Res)
	}
}

func TestValueCopiedOnlyWhenWanted(t *testing.T) {
	s := newStore(t, Config{})
	do(s, setReq("k", "abcdef"))
	op := tiers.Op{Req: tiers.Request{Kind: tiers.KindGet, Key: []byte("k"), WantSize: true}}
	op.Res.Value = make([]byte, 0, 64)
	s.Do(&op)
	if op.Res.Status != tiers.StatusHit || len(op.Res.Value) != 0 || op.Res.Size != 6 {
		t.Fatalf("got %+v", op.Res)
	}
	op.Req.WantValue = true
	buf := op.Res.Value[:1]
	s.Do(&op)
	if string(op.Res.Value) != "abcdef" || &op.Res.Value[0] != &buf[0] {
		t.Fatalf("value %q not written into the caller's buffer", op.Res.Value)
	}
}

// The store must own its bytes: changing the caller's buffers after Do
// must not change what is stored, nor the other way round.
func TestStoreCopiesKeyAndValue(t *testing.T) {
	s := newStore(t, Config{})
	key, val := []byte("key"), []byte("value")
	do(s, tiers.Request{Kind: tiers.KindSet, Key: key, Value: val})
	copy(key, "xxx")
	copy(val, "XXXXX")
	res := do(s, getReq("key"))
	if string(res.Value) != "value" {
		t.Fatalf("stored value changed with the caller's buffer: %q", res.Value)
	}
	res.Value[0] = 'Z'
	if got := do(s, getReq("key")); string(got.Value) != "value" {
		t.Fatalf("stored value changed with the result's buffer: %q", got.Value)
	}
}

func TestAppendVivify(t *testing.T) {
	clk := newClock(clockStart)
	s := newStore(t, Config{AppendVivify: true, Now: clk.Now})
	req := tiers.Request{Kind: tiers.KindSet, Mode: tiers.ModeAppend, Key: []byte("l"), Value: []byte("a,"),
		ClientFlags: 3, Vivify: true, VivifyTTL: 30}
	if res := do(s, req); res.Status != tiers.StatusStored {
		t.Fatalf("vivifying append: %v", res.Status)
	}
	req.Value = []byte("b,")
	do(s, req)
	res := do(s, tiers.Request{Kind: tiers.KindGet, Key: []byte("l"), WantValue: true})
	if string(res.Value) != "a,b," || res.TTL != 30 || res.ClientFlags != 3 {
		t.Fatalf("got %+v", res)
	}
	req.Key, req.Mode = []byte("p"), tiers.ModePrepend
	if res := do(s, req); res.Status != tiers.StatusStored {
		t.Fatalf("vivifying prepend: %v", res.Status)
	}
	req.Key, req.Vivify = []byte("q"), false
	if res := do(s, req); res.Status != tiers.StatusNotStored {
		t.Fatalf("append without N: %v", res.Status)
	}
}

func TestStatsCount(t *testing.T) {
	clk := newClock(clockStart)
	s := newStore(t, Config{Now: clk.Now})
	do(s, setReq("a", "1"))
	do(s, tiers.Request{Kind: tiers.KindSet, Key: []byte("b"), Value: []byte("2"), TTL: 5})
	do(s, getReq("a"))
	do(s, getReq("zz"))
	do(s, tiers.Request{Kind: tiers.KindGet, Key: []byte("a"), HasTTL: true, TTL: 100, Text: true})
	do(s, tiers.Request{Kind: tiers.KindGet, Key: []byte("zz"), HasTTL: true, TTL: 100, Text: true})
	do(s, tiers.Request{Kind: tiers.KindArith, Key: []byte("a"), Delta: 1})
	do(s, tiers.Request{Kind: tiers.KindArith, Mode: tiers.ModeDecr, Key: []byte("zz"), Delta: 1})
	do(s, tiers.Request{Kind: tiers.KindSet, Key: []byte("a"), HasCompareCAS: true, CompareCAS: 999})
	do(s, tiers.Request{Kind: tiers.KindSet, Key: []byte("zz"), HasCompareCAS: true, CompareCAS: 1})
	do(s, tiers.Request{Kind: tiers.KindDelete, Key: []byte("zz")})
	clk.advance(5)
	do(s, getReq("b")) // expired
	do(s, tiers.Request{Kind: tiers.KindDelete, Key: []byte("a")})
	do(s, tiers.Request{Kind: tiers.KindFlush})

	got := s.Stats()
	want := Stats{
		TotalItems: 2, LimitMaxBytes: DefaultMaxBytes,
		CmdGet: 3, GetHits: 1, GetMisses: 2, GetExpired: 1,
		CmdTouch: 2, TouchHits: 1, TouchMisses: 1,
		CmdSet: 4, CasMisses: 1, CasBadval: 1,
		IncrHits: 1, DecrMisses: 1,
		DeleteHits: 1, DeleteMisses: 1,
		CmdFlush: 1,
	}
	if got != want {
		t.Fatalf("stats\n got %+v\nwant %+v", got, want)
	}
	if s.Len() != 0 {
		t.Fatalf("Len = %d", s.Len())
	}
}

// A 1 GiB store must not take 1 GiB up front.
func TestMemoryAllocatedAsUsed(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := newStore(t, Config{MaxBytes: 1 << 30})
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 1<<20 {
		t.Fatalf("an empty 1 GiB store holds %d bytes of heap", grew)
	}
	runtime.KeepAlive(s)
}
