package compat

import (
	"slices"
	"strconv"
	"testing"
)

// mcrouter does not run here, so its two hashes are checked against the
// values mcrouter's own unit tests pin (mcrouter/lib/test/Ch3HashTest.cpp
// and Crc32HashTest.cpp): the same keys, pool sizes and expected servers.

// signedRange returns the 256 bytes -128..127 (as chars), the long key
// those tests use.
func signedRange() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i - 128)
	}
	return b
}

func TestFurcMatchesMcrouterVectors(t *testing.T) {
	long := signedRange()
	rev := slices.Clone(long)
	slices.Reverse(rev)
	for _, c := range []struct {
		key  []byte
		m    uint32
		want uint32
	}{
		{[]byte("sample"), 100, 97},
		{[]byte("sample"), 1, 0},
		{[]byte(""), 100, 72},
		{[]byte(""), 1, 0},
		{[]byte(""), MaxCh3Servers, 6173600},
		{[]byte("sample"), MaxCh3Servers, 5167780},
		{long, 99999, 31015},
		{rev, 99999, 67101},
	} {
		if got := furcHash(c.key, c.m); got != c.want {
			t.Errorf("furc(%q, %d) = %d, mcrouter's test wants %d", c.key, c.m, got, c.want)
		}
	}
	for _, c := range []struct {
		m, keys uint32
		want    []int
	}{
		{3, 1000, []int{307, 342, 351}},
		{10, 10000, []int{995, 955, 1046, 968, 1032, 972, 1016, 1038, 1010, 968}},
	} {
		counts := make([]int, c.m)
		for i := range c.keys {
			counts[furcHash([]byte(strconv.Itoa(int(i))), c.m)]++
		}
		if !slices.Equal(counts, c.want) {
			t.Errorf("ch3 over %d servers, keys 0..%d: counts %v, mcrouter's test wants %v", c.m, c.keys-1, counts, c.want)
		}
	}
}

func TestCRC32MatchesMcrouterVectors(t *testing.T) {
	long := signedRange()
	rev := slices.Clone(long)
	slices.Reverse(rev)
	for _, c := range []struct {
		key  []byte
		m    uint32
		want uint32
	}{
		{[]byte("sample"), 100, 7},
		{[]byte("sample"), 1, 0},
		{[]byte(""), 100, 0},
		{[]byte(""), 1<<30 - 1, 0},
		{[]byte("sample"), 1<<30 - 1, 822834884},
		{long, 99999, 11697},
		{rev, 99999, 97630},
	} {
		if got := hashCRC32Low31(c.key) % c.m; got != c.want {
			t.Errorf("crc32(%q) %% %d = %d, mcrouter's test wants %d", c.key, c.m, got, c.want)
		}
	}
}

// TestLayoutsOverMcrouterPools checks the two mcrouter layouts route as
// the hashes do over a pool's server list.
func TestLayoutsOverMcrouterPools(t *testing.T) {
	servers := make([]Server, 10)
	for i := range servers {
		servers[i] = Server{Host: "10.0.0.1", Port: 11211 + i}
	}
	ch3, err := New(Spec{Scheme: McrouterCh3}, servers)
	if err != nil {
		t.Fatal(err)
	}
	crc, err := New(Spec{Scheme: McrouterCRC32}, servers)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int, 10)
	for i := range 10000 {
		k := []byte(strconv.Itoa(i))
		counts[ch3.Server(k)]++
		if got, want := crc.Server(k), int(hashCRC32Low31(k)%10); got != want {
			t.Fatalf("crc32 layout: key %s on %d, want %d", k, got, want)
		}
	}
	if want := []int{995, 955, 1046, 968, 1032, 972, 1016, 1038, 1010, 968}; !slices.Equal(counts, want) {
		t.Fatalf("ch3 layout counts %v, want %v", counts, want)
	}
}

// TestMurmur3 pins the x86 32-bit variant on public reference values, and
// checks that hashing a‖b in two pieces equals hashing it whole at every
// split.
func TestMurmur3(t *testing.T) {
	for _, c := range []struct {
		s    string
		seed uint32
		want uint32
	}{
		{"", 0, 0},
		{"", 1, 0x514e28b7},
		{"hello", 0, 0x248bfa47},
		{"The quick brown fox jumps over the lazy dog", 0, 0x2e4ff723},
	} {
		if got := murmur3x86_32(c.seed, []byte(c.s), nil); got != c.want {
			t.Errorf("murmur3(%q, %d) = %#x, want %#x", c.s, c.seed, got, c.want)
		}
	}
	s := []byte("127.0.0.1:11211-some:key:of:odd:length")
	whole := murmur3x86_32(7, s, nil)
	for i := range s {
		if got := murmur3x86_32(7, s[:i], s[i:]); got != whole {
			t.Fatalf("split at %d: %#x, whole %#x", i, got, whole)
		}
	}
}
