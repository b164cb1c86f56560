package proxy_test

import (
	"context"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/tiers/embedded"
	"github.com/strata-cache/strata/tiers/layered"
)

// The embedded store is what strata's default answers me and lru_crawler
// from.
var _ proxy.Inspector = (*embedded.Store)(nil)

func TestCountersFollowRequests(t *testing.T) {
	l1, _ := embedded.New(embedded.Config{})
	l2, _ := embedded.New(embedded.Config{})
	cfg := proxy.Config{Listen: "127.0.0.1:0"}
	loops := proxytest.Loops(t, cfg)
	tier, _ := layered.New(layered.Config{Threshold: 1}, l1, l2, loops)
	srv, err := proxy.New(cfg, tier, loops)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	addr := srv.Addr() // the port the kernel chose
	defer srv.Stop(context.Background())
	in := []byte("set a 0 0 1\r\nx\r\nget a\r\nget a\r\nget b\r\ngets a\r\n" +
		"touch a 10\r\ntouch b 10\r\nincr n 1\r\nset n 0 0 1\r\n5\r\nincr n 2\r\ndecr n 1\r\n" +
		"cas a 0 0 1 999999\r\ny\r\ndelete a\r\ndelete a\r\nmn\r\nquit\r\n")
	out, err := memcachedtest.Exchange(addr, in, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c := srv.Counters()
	want := proxy.Counters{
		ConnsTotal: 1,
		Gets:       4, GetHits: 3, GetMisses: 1, // get a (L2), get a (L1), get b, gets a
		L1Hits: 1, L2Hits: 2, Promoted: 1,
		Sets: 3, Touches: 2, TouchHits: 1, // set a, set n, cas a
		Deletes: 2, DeleteHits: 1,
		Ariths: 3, ArithHits: 2,
		IncrHits: 1, IncrMisses: 1, DecrHits: 1,
		CasBadval: 1,
		MetaCmds:  1, // mn
		BytesRead: uint64(len(in)), BytesWritten: uint64(len(out)),
	}
	c.ConnsCurrent = 0 // the connection may or may not have closed yet
	if c != want {
		t.Errorf("counters\n got %+v\nwant %+v", c, want)
	}
}
