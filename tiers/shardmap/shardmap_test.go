package shardmap

import (
	"errors"
	"fmt"
	"math"
	"testing"
)

const testSeed = 0x5eed

func servers(n int) []Server {
	s := make([]Server, n)
	for i := range s {
		s[i] = Server{Addr: fmt.Sprintf("10.0.0.%d:11211", i+1), Weight: 1}
	}
	return s
}

// TestSpread checks every server's share against its weighted share. The
// bound, 10 %, is 3.7 standard deviations of the binomial spread for four
// equal servers over 4096 shards (see the package comment); the mean
// deviation over many seeds must stay near the expected 2.2 %.
func TestSpread(t *testing.T) {
	const shards = 4096
	var sumDev float64
	var n int
	for seed := uint64(1); seed <= 20; seed++ {
		m, err := Rendezvous(seed, shards, servers(4))
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range m.Counts() {
			want := float64(shards) / 4
			dev := math.Abs(float64(c)-want) / want
			if dev > 0.10 {
				t.Errorf("seed %d server %d: %d shards, want %.0f ± 10%%", seed, i, c, want)
			}
			sumDev += dev
			n++
		}
	}
	// E|X-μ|/μ for a binomial is about sqrt(2/π)·σ/μ = 0.8·2.7 % = 2.2 %.
	if mean := sumDev / float64(n); mean > 0.035 {
		t.Errorf("mean relative deviation %.2f%%, want about 2.2%%", 100*mean)
	}
}

func TestWeightedSpread(t *testing.T) {
	const shards = 8192
	list := []Server{{"a:1", 1}, {"b:1", 2}, {"c:1", 1}, {"d:1", 4}}
	m, err := Rendezvous(testSeed, shards, list)
	if err != nil {
		t.Fatal(err)
	}
	total := 8.0
	for i, c := range m.Counts() {
		p := float64(list[i].Weight) / total
		want := shards * p
		sd := math.Sqrt(shards * p * (1 - p))
		if math.Abs(float64(c)-want) > 4*sd {
			t.Errorf("%s (weight %d): %d shards, want %.0f ± %.0f", list[i].Addr, list[i].Weight, c, want, 4*sd)
		}
	}
}

func TestMinimalMovement(t *testing.T) {
	const shards = 4096
	four, _ := Rendezvous(testSeed, shards, servers(4))
	five, _ := Rendezvous(testSeed, shards, servers(5))

	// Adding a fifth server moves only shards that the newcomer wins.
	moved := four.Moved(five)
	newcomer := servers(5)[4].Addr
	for sh := 0; sh < shards; sh++ {
		if four.OwnerAddr(sh) != five.OwnerAddr(sh) && five.OwnerAddr(sh) != newcomer {
			t.Fatalf("shard %d moved from %s to %s, not to the new server", sh, four.OwnerAddr(sh), five.OwnerAddr(sh))
		}
	}
	p := 0.2
	want, sd := shards*p, math.Sqrt(shards*p*(1-p))
	if math.Abs(float64(moved)-want) > 4*sd {
		t.Errorf("adding a 5th server moved %d shards, want %.0f ± %.0f", moved, want, 4*sd)
	}

	// Removing a server moves only its own shards.
	list := servers(5)
	gone := list[2].Addr
	four2, _ := Rendezvous(testSeed, shards, append(append([]Server{}, list[:2]...), list[3:]...))
	owned := five.Counts()[2]
	if got := five.Moved(four2); got != owned {
		t.Errorf("removing %s moved %d shards, want exactly its %d", gone, got, owned)
	}
	for sh := 0; sh < shards; sh++ {
		if five.OwnerAddr(sh) != gone && five.OwnerAddr(sh) != four2.OwnerAddr(sh) {
			t.Fatalf("shard %d of %s moved although its server stayed", sh, five.OwnerAddr(sh))
		}
	}
}

func TestOrderIndependent(t *testing.T) {
	list := servers(6)
	rev := make([]Server, len(list))
	for i := range list {
		rev[len(list)-1-i] = list[i]
	}
	a, _ := Rendezvous(testSeed, 1024, list)
	b, _ := Rendezvous(testSeed, 1024, rev)
	if n := a.Moved(b); n != 0 {
		t.Errorf("listing the same servers in another order moved %d shards", n)
	}
}

func TestShardIsSeededAndInRange(t *testing.T) {
	key := []byte("user:1234")
	a, b := Shard(1, key, 4096), Shard(2, key, 4096)
	if a == b {
		// Possible by chance (1 in 4096), but not for this key and these seeds.
		t.Errorf("seeds 1 and 2 put %q in the same shard %d", key, a)
	}
	for i := 0; i < 1000; i++ {
		if s := Shard(uint64(i), []byte(fmt.Sprint(i)), 7); s < 0 || s >= 7 {
			t.Fatalf("shard %d out of range", s)
		}
	}
	if n := testing.AllocsPerRun(100, func() { Shard(9, key, 4096) }); n != 0 {
		t.Errorf("Shard allocates %.0f times", n)
	}
}

func TestInvalid(t *testing.T) {
	cases := []struct {
		name    string
		shards  int
		servers []Server
	}{
		{"no servers", 16, nil},
		{"zero shards", 0, servers(1)},
		{"duplicate", 16, []Server{{"a:1", 1}, {"a:1", 1}}},
		{"zero weight", 16, []Server{{"a:1", 0}}},
		{"empty address", 16, []Server{{"", 1}}},
	}
	for _, c := range cases {
		if _, err := Rendezvous(1, c.shards, c.servers); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err %v, want ErrInvalid", c.name, err)
		}
	}
	if _, err := New(1, servers(2), []int{0, 1, 2}); !errors.Is(err, ErrInvalid) {
		t.Errorf("owner out of range: err %v, want ErrInvalid", err)
	}
	m, err := New(7, servers(2), []int{1, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if m.Owner(0) != 1 || m.Owner(1) != 0 || m.Shards() != 3 || m.Version() != 7 {
		t.Errorf("New kept the wrong assignment: %v", m.owner)
	}
}
