package loccache_test

import (
	"fmt"

	"github.com/strata-cache/strata/tiers/locality/keyrule"
	"github.com/strata-cache/strata/tiers/locality/loccache"
)

// One event loop's routing of a key: a miss asks the location service, a
// hit routes, a wrong-owner answer drops the epoch it refused.
func Example() {
	rules, _ := keyrule.New(keyrule.Config{Rules: []keyrule.Rule{{Prefix: "u:", Delimiter: ":", Field: 1}}})
	cache, _ := loccache.New(loccache.Config{Capacity: 1024})

	key := []byte("u:42:cart")
	id := rules.Match(key)
	h := rules.Hash(id)
	if _, ok := cache.Get(h, id); !ok {
		// The location service answers off the request path, later.
		cache.Put(h, id, loccache.Location{Owner: "eu", Epoch: 3})
	}
	loc, _ := cache.Get(h, id)
	fmt.Printf("%s → %s at epoch %d\n", rules.Name(id), loc.Owner, loc.Epoch)

	// eu refuses epoch 3: the μ-shard moved. Drop it and re-read.
	cache.Invalidate(h, id, loc.Epoch)
	_, ok := cache.Get(h, id)
	fmt.Printf("cached after the refusal: %v; %+v\n", ok, cache.Stats())
	// Output:
	// u: 42 → eu at epoch 3
	// cached after the refusal: false; {Hits:1 Misses:2 Evictions:0 Invalidations:1}
}
