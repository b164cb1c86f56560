package embedded

import (
	"slices"
	"strings"
	"testing"

	"github.com/strata-cache/strata/tiers"
)

// memcachedSlabSizes are the chunk sizes memcached 1.6.18 prints with -vv
// for its defaults (-n 48 -f 1.25 -I 1m).
var memcachedSlabSizes = []int{96, 120, 152, 192, 240, 304, 384, 480, 600, 752, 944, 1184, 1480,
	1856, 2320, 2904, 3632, 4544, 5680, 7104, 8880, 11104, 13880, 17352, 21696, 27120, 33904,
	42384, 52984, 66232, 82792, 103496, 129376, 161720, 202152, 252696, 315872, 394840, 524288}

func TestSlabSizesAreMemcached(t *testing.T) {
	got := slabSizes(1 << 20)
	if !slices.Equal(got[1:], memcachedSlabSizes) {
		t.Fatalf("classes\n got %v\nwant %v", got[1:], memcachedSlabSizes)
	}
	for _, tc := range []struct{ total, class int }{{1, 1}, {96, 1}, {97, 2}, {120, 2}, {121, 3}, {524288, 39}, {900000, 39}} {
		if c := classOf(got, tc.total); c != tc.class {
			t.Errorf("classOf(%d) = %d, want %d", tc.total, c, tc.class)
		}
	}
}

func TestInspection(t *testing.T) {
	now := int64(1_000_000)
	s, err := New(Config{Now: func() int64 { return now }})
	if err != nil {
		t.Fatal(err)
	}
	do := func(r tiers.Request) {
		op := &tiers.Op{Req: r}
		s.Do(op)
	}
	do(tiers.Request{Kind: tiers.KindSet, Mode: tiers.ModeSet, Key: []byte("a"), Value: []byte("x"), Text: true})
	do(tiers.Request{Kind: tiers.KindSet, Mode: tiers.ModeSet, Key: []byte("b c"), Value: []byte(strings.Repeat("v", 200)), TTL: 100, HasTTL: true})
	do(tiers.Request{Kind: tiers.KindGet, Key: []byte("a"), WantValue: true})
	now += 5

	// "a": 48+8+1+1+1+2 = 61 bytes, class 1; fetched, untouched for 5s.
	if got := string(s.AppendMetaDebug(nil, []byte("a"), []byte("a"))); got != "ME a exp=-1 la=5 cas=1 fetch=yes cls=1 size=61\r\n" {
		t.Errorf("me a: %q", got)
	}
	if got := string(s.AppendMetaDebug(nil, []byte("nx"), []byte("nx"))); got != "EN\r\n" {
		t.Errorf("me nx: %q", got)
	}
	// "b c": 48+8+3+1+200+2 = 262 bytes, class 6 (304); expires at 1,000,100.
	if got := string(s.AppendCacheDump(nil, 6, 0)); got != "ITEM b c [200 b; 1000100 s]\r\n" {
		t.Errorf("cachedump 6: %q", got)
	}
	if got := string(s.AppendCacheDump(nil, 1, 0)); got != "ITEM a [1 b; 0 s]\r\n" {
		t.Errorf("cachedump 1: %q", got)
	}
	only6 := make([]bool, 64)
	only6[6] = true
	if got := string(s.AppendMetaDump(nil, only6)); got != "key=b%20c exp=1000100 la=1000000 cas=2 fetch=no cls=6 size=262\r\n" {
		t.Errorf("metadump 6: %q", got)
	}
	items := string(s.AppendItemStats(nil))
	for _, want := range []string{"STAT items:1:number 1\r\n", "STAT items:1:age 5\r\n", "STAT items:1:mem_requested 61\r\n",
		"STAT items:6:number 1\r\n", "STAT items:6:mem_requested 262\r\n"} {
		if !strings.Contains(items, want) {
			t.Errorf("stats items lacks %q:\n%s", want, items)
		}
	}
	slabs := string(s.AppendSlabStats(nil))
	for _, want := range []string{"STAT 1:chunk_size 96\r\n", "STAT 1:chunks_per_page 10922\r\n", "STAT 6:chunk_size 304\r\n",
		"STAT 6:used_chunks 1\r\n", "STAT 6:free_chunks 3448\r\n", "STAT active_slabs 2\r\n"} {
		if !strings.Contains(slabs, want) {
			t.Errorf("stats slabs lacks %q:\n%s", want, slabs)
		}
	}
	// Crawl reclaims what expired, in the classes asked for only.
	now += 200
	only1 := make([]bool, 64)
	only1[1] = true
	s.Crawl(only1)
	if s.Len() != 2 {
		t.Fatalf("crawl of class 1 left %d items, want 2 (b c is in class 6)", s.Len())
	}
	s.Crawl(nil)
	if s.Len() != 1 || s.Stats().Reclaimed != 1 {
		t.Fatalf("crawl of all: %d items, %d reclaimed", s.Len(), s.Stats().Reclaimed)
	}
	// stats reset restarts what AppendStats shows, not Stats.
	s.ResetStats()
	if !strings.Contains(string(s.AppendStats(nil)), "STAT reclaimed 0\r\n") || s.Stats().Reclaimed != 1 {
		t.Errorf("after ResetStats: %q, Stats().Reclaimed %d", s.AppendStats(nil), s.Stats().Reclaimed)
	}
}
