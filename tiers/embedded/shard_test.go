package embedded

import (
	"fmt"
	"testing"
)

// Keys whose 64-bit hashes collide share an index chain. Real collisions
// are too rare to find, so the test forces one hash on several keys.
func TestHashChains(t *testing.T) {
	var sh shard
	sh.init(1 << 20)
	const h = 0xfeedface
	keys := []string{"a", "b", "c", "d"}
	for _, k := range keys {
		data := []byte(k + "=" + k)
		sh.insertLocked(data, len(k), h, 0, 0, clockStart, 1, 0)
	}
	find := func(k string) string {
		i := sh.lookupLocked([]byte(k), h, clockStart, nil)
		if i == nilIdx {
			return ""
		}
		return string(sh.entries[i].value())
	}
	for _, k := range keys {
		if got := find(k); got != "="+k {
			t.Fatalf("lookup %s = %q", k, got)
		}
	}
	if find("e") != "" {
		t.Fatal("found a key never inserted")
	}
	// Unlink from the middle, the head and the tail of the chain.
	for _, k := range []string{"b", "d", "a"} {
		sh.unlinkLocked(sh.lookupLocked([]byte(k), h, clockStart, nil))
		if find(k) != "" {
			t.Fatalf("%s still found after unlink", k)
		}
	}
	if find("c") != "=c" || sh.items != 1 || sh.index.len() != 1 {
		t.Fatalf("survivor lost: items %d index %d", sh.items, sh.index.len())
	}
	sh.unlinkLocked(sh.lookupLocked([]byte("c"), h, clockStart, nil))
	if sh.index.len() != 0 || sh.bytes != 0 || sh.head != nilIdx || sh.tail != nilIdx {
		t.Fatalf("empty shard not empty: index %d bytes %d head %d tail %d", sh.index.len(), sh.bytes, sh.head, sh.tail)
	}
	// Freed slots are reused before the table grows.
	n := len(sh.entries)
	for i := 0; i < n; i++ {
		k := fmt.Sprint(i)
		sh.insertLocked([]byte(k), len(k), uint64(i), 0, 0, clockStart, 1, 0)
	}
	if len(sh.entries) != n {
		t.Fatalf("entries grew from %d to %d with %d free slots", n, len(sh.entries), n)
	}
}

func TestParseNumber(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true},
		{"42", 42, true},
		{"  42", 42, true},
		{"\t\n\v\f\r42", 42, true},
		{"+42", 42, true},
		{"42 ", 42, true},
		{"42\r\nx", 42, true},
		{"42\x00junk", 42, true},
		{"42x", 0, false},
		{"4 2", 4, true},
		{"", 0, false},
		{" ", 0, false},
		{"+", 0, false},
		{"-", 0, false},
		{"- 1", 0, false},
		{"-0", 0, true},
		{"-1", 0, false},
		{"-9223372036854775808", 0, false},
		{"-9223372036854775809", 9223372036854775807, true},
		{"-18446744073709551615", 1, true},
		{"18446744073709551615", 18446744073709551615, true},
		{"18446744073709551616", 0, false},
		{"99999999999999999999", 0, false},
		{"9223372036854775808", 9223372036854775808, true},
		{"9223372036854775808 -", 0, false},
		{"9223372036854775808\x00-", 9223372036854775808, true},
		{"00000000000000000000000000000007", 7, true},
	}
	for _, tc := range tests {
		got, ok := parseNumber([]byte(tc.in))
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("parseNumber(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestExptimeAt(t *testing.T) {
	const now = clockStart
	tests := []struct {
		ttl, want int64
	}{
		{0, 0},
		{-1, expiredAt},
		{-maxDelta * 2, expiredAt},
		{1, now + 1},
		{maxDelta, now + maxDelta},
		{maxDelta + 1, maxDelta + 1}, // absolute, long past
		{now + 100, now + 100},       // absolute
	}
	for _, tc := range tests {
		if got := exptimeAt(tc.ttl, now); got != tc.want {
			t.Errorf("exptimeAt(%d) = %d, want %d", tc.ttl, got, tc.want)
		}
	}
	if !expired(expiredAt, now) || expired(0, now) || !expired(now, now) || expired(now+1, now) {
		t.Error("expired() disagrees with memcached's exptime <= current_time")
	}
	if ttlLeft(0, now) != -1 || ttlLeft(now+5, now) != 5 || ttlLeft(expiredAt, now) != 0 {
		t.Error("ttlLeft")
	}
}
