package keyrule_test

import (
	"fmt"

	"github.com/strata-cache/strata/tiers/locality/keyrule"
)

func Example() {
	rs, err := keyrule.New(keyrule.Config{Rules: []keyrule.Rule{
		{Prefix: "u:", Delimiter: ":", Field: 1},
		{Prefix: "g:", Tag: true},
	}})
	if err != nil {
		panic(err)
	}
	for _, k := range []string{"u:42:profile", "g:{blue}:feed", "page:home"} {
		id := rs.Match([]byte(k))
		if !id.Ok() {
			fmt.Printf("%s: served locally\n", k)
			continue
		}
		fmt.Printf("%s: μ-shard %q\n", k, rs.Name(id))
	}
	// Output:
	// u:42:profile: μ-shard "u: 42"
	// g:{blue}:feed: μ-shard "g: blue"
	// page:home: served locally
}
