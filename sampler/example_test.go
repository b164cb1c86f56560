package sampler_test

import (
	"context"
	"fmt"

	"github.com/strata-cache/strata/sampler"
)

func Example() {
	s, err := sampler.New(sampler.Config{Rate: 1, Cluster: "c1", Region: "r1"}) // rate 1: every key
	if err != nil {
		panic(err)
	}
	s.Start()

	// On the event loop, per request: check, then record after the tiers answer.
	for _, a := range []struct {
		key   string
		level uint8
	}{{"photos:foobar:12345:c1", 2}, {"photos:foobar:12345:c1", 1}, {"photos:foobar:678:c2", 0}} {
		key := []byte(a.key)
		if s.Sampled(key) {
			size := 0 // a miss has no value
			if a.level > 0 {
				size = 100
			}
			s.Record(&sampler.Record{Op: sampler.OpGet, Key: key, ValueSize: size, Level: a.level})
		}
	}

	s.Sync(context.Background())
	r := s.Live()
	for _, f := range r.Families {
		fmt.Printf("%s: %d accesses, %d keys, working set %d bytes, h1 %.2f, h2 %.2f\n",
			f.Family, f.Accesses, f.UniqueKeys, f.RegionWSSBytes, f.HitRatio.L1, f.HitRatio.L2)
	}
	s.Stop(context.Background())
	// Output:
	// photos:foobar:{N}:c{N}: 3 accesses, 2 keys, working set 142 bytes, h1 0.33, h2 0.50
}
