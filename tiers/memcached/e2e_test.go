package memcached_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
	"github.com/strata-cache/strata/internal/poll"
)

// TestSetLandsInL2NotL1: a set through strata is stored in the L2
// memcached and not in the L1 memcached, as the servers themselves say.
func TestSetLandsInL2NotL1(t *testing.T) {
	s := startStrata(t, setup{})
	mc := memcache.New(s.addr)
	keys := make([]string, 20)
	for i := range keys {
		keys[i] = fmt.Sprint("user:", i)
		if err := mc.Set(&memcache.Item{Key: keys[i], Value: []byte("v" + keys[i]), Flags: 3}); err != nil {
			t.Fatal(err)
		}
	}
	inL2 := presentDirect(t, s.l2mc[0].Addr, keys)
	inL1 := presentDirect(t, s.l1mc.Addr, keys)
	for _, k := range keys {
		if inL2[k] != "v"+k {
			t.Errorf("%s in L2: %q", k, inL2[k])
		}
	}
	if len(inL1) != 0 {
		t.Errorf("L1 holds %d keys after sets: %v", len(inL1), inL1)
	}
	// gomemcache reads with gets, which goes to L2 only: still nothing in L1.
	it, err := mc.Get(keys[0])
	if err != nil || string(it.Value) != "v"+keys[0] || it.Flags != 3 {
		t.Fatalf("get through strata: %+v %v", it, err)
	}
	if n := len(presentDirect(t, s.l1mc.Addr, keys)); n != 0 {
		t.Errorf("a gets promoted %d keys into L1", n)
	}
}

// TestMultiGetOneRoundTripPerTier: a 50-key get is answered in one reply,
// and costs one write to the L1 server and one to each L2 server.
func TestMultiGetOneRoundTripPerTier(t *testing.T) {
	// -R 1000: memcached answers the whole pipelined batch at once instead
	// of yielding every 20 requests.
	s := startStrata(t, setup{l2Servers: 2, rand: neverPromote, mcArgs: []string{"-R", "1000"}})
	keys := make([]string, 50)
	kv := map[string]string{}
	for i := range keys {
		keys[i] = fmt.Sprint("mk", i)
		kv[keys[i]] = strings.Repeat(fmt.Sprint(i%10), 10+i)
	}
	c := mustDial(t, s.addr)
	c.deadline(10 * time.Second)
	for _, k := range keys {
		if l, err := c.set(k, kv[k]); err != nil || l != "STORED" {
			t.Fatalf("set %s: %q %v", k, l, err)
		}
	}
	perServer := map[string]int{}
	for _, k := range keys {
		perServer[s.l2.ServerFor([]byte(k))]++
	}
	if len(perServer) != 2 {
		t.Fatalf("the 50 keys sit on %d L2 servers, want both", len(perServer))
	}
	writes := func() (l1 uint64, l2 map[string]uint64) {
		l2 = map[string]uint64{}
		for _, sv := range s.l2.Stats().Servers {
			l2[sv.Addr] = sv.Writes
		}
		return s.l1.Stats().Total.Writes, l2
	}
	l1Before, l2Before := writes()
	l1Req, l2Req := s.l1.Stats().Total.Requests, s.l2.Stats().Total.Requests

	vals, err := c.get(keys...)
	if err != nil {
		t.Fatal(err)
	}
	if len(vals) != len(keys) {
		t.Fatalf("%d values in the reply, want %d", len(vals), len(keys))
	}
	for _, k := range keys {
		if vals[k] != kv[k] {
			t.Errorf("%s = %q, want %q", k, vals[k], kv[k])
		}
	}
	l1After, l2After := writes()
	if d := l1After - l1Before; d != 1 {
		t.Errorf("L1 took %d writes for one 50-key get, want 1", d)
	}
	for addr, n := range l2After {
		if d := n - l2Before[addr]; d != 1 {
			t.Errorf("L2 server %s took %d writes for one 50-key get, want 1", addr, d)
		}
	}
	if d := s.l1.Stats().Total.Requests - l1Req; d != 50 {
		t.Errorf("L1 saw %d requests, want 50", d)
	}
	if d := s.l2.Stats().Total.Requests - l2Req; d != 50 {
		t.Errorf("L2 saw %d requests, want 50", d)
	}
}

// TestEmbeddedL1OverMemcachedL2: the mixed setup. With N = 1 every L2 hit
// is promoted, so the second read is an L1 hit.
func TestEmbeddedL1OverMemcachedL2(t *testing.T) {
	s := startStrata(t, setup{l1: l1Embedded, threshold: 1})
	c := mustDial(t, s.addr)
	c.deadline(10 * time.Second)
	if l, err := c.set("mixed", "value"); err != nil || l != "STORED" {
		t.Fatalf("set: %q %v", l, err)
	}
	for i := range 3 {
		vals, err := c.get("mixed")
		if err != nil || vals["mixed"] != "value" {
			t.Fatalf("get %d: %v %v", i, vals, err)
		}
	}
	poll.Until(t, 5*time.Second, "the promotion", func() bool { return s.tier.Stats().L1Hits >= 1 })
	st := s.tier.Stats()
	if st.L2Hits < 1 || st.PromotionsDone < 1 {
		t.Errorf("layered stats: %+v", st)
	}
	if l, err := c.del("mixed"); err != nil || l != "DELETED" {
		t.Fatalf("delete: %q %v", l, err)
	}
	if vals, err := c.get("mixed"); err != nil || len(vals) != 0 {
		t.Errorf("get after delete: %v %v", vals, err)
	}
}

// TestSingleTier: layered with no L1 (--l1 none) over one memcached.
func TestSingleTier(t *testing.T) {
	s := startStrata(t, setup{l1: l1None})
	mc := memcache.New(s.addr)
	if err := mc.Set(&memcache.Item{Key: "a", Value: []byte("1"), Expiration: 100}); err != nil {
		t.Fatal(err)
	}
	if err := mc.Add(&memcache.Item{Key: "a", Value: []byte("2")}); err != memcache.ErrNotStored {
		t.Errorf("add over an existing key: %v", err)
	}
	n, err := mc.Increment("a", 41)
	if err != nil || n != 42 {
		t.Errorf("incr: %d %v", n, err)
	}
	it, err := mc.Get("a")
	if err != nil || string(it.Value) != "42" {
		t.Fatalf("get: %+v %v", it, err)
	}
	it.Value = []byte("cas")
	if err := mc.CompareAndSwap(it); err != nil {
		t.Errorf("cas: %v", err)
	}
	if err := mc.CompareAndSwap(it); err != memcache.ErrCASConflict {
		t.Errorf("second cas with the old token: %v", err)
	}
	if err := mc.Touch("a", 10); err != nil {
		t.Errorf("touch: %v", err)
	}
	if err := mc.Delete("a"); err != nil {
		t.Errorf("delete: %v", err)
	}
	if _, err := mc.Get("a"); err != memcache.ErrCacheMiss {
		t.Errorf("get after delete: %v", err)
	}
	if _, err := mc.Increment("nope", 1); err != memcache.ErrCacheMiss {
		t.Errorf("incr absent: %v", err)
	}
	if err := mc.FlushAll(); err != nil {
		t.Errorf("flush_all: %v", err)
	}
	raw, err := mcStats(s.addr)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"STAT l2_requests ", "STAT l2_" + strings.ReplaceAll(s.l2mc[0].Addr, ":", "_") + "_state up"} {
		if !strings.Contains(raw, want) {
			t.Errorf("stats lack %q", want)
		}
	}
	// A plain get (gomemcache reads with gets) goes straight to L2.
	c := mustDial(t, s.addr)
	c.deadline(5 * time.Second)
	if l, err := c.set("plain", "p"); err != nil || l != "STORED" {
		t.Fatalf("set: %q %v", l, err)
	}
	before := s.tier.Stats().L2Hits
	if vals, err := c.get("plain"); err != nil || vals["plain"] != "p" {
		t.Fatalf("plain get: %v %v", vals, err)
	}
	if got := s.tier.Stats().L2Hits - before; got != 1 {
		t.Errorf("plain get: %d L2 hits, want 1", got)
	}
}

func mcStats(addr string) (string, error) {
	c, err := dialRaw(addr)
	if err != nil {
		return "", err
	}
	defer c.c.Close()
	c.deadline(5 * time.Second)
	fmt.Fprintf(c.w, "stats\r\n")
	if err := c.w.Flush(); err != nil {
		return "", err
	}
	var b strings.Builder
	for {
		l, err := c.line()
		if err != nil {
			return b.String(), err
		}
		if l == "END" {
			return b.String(), nil
		}
		b.WriteString(l + "\n")
	}
}
