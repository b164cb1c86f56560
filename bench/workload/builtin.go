package workload

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// The built-in profiles are written in the same TOML users write, so each
// doubles as an example and goes through the same parser.
//
// The twitter-* profiles are shaped after the published statistics of
// Twitter's production cache traces: J. Yang, Y. Yue, K. V. Rashmi, "A large
// scale analysis of hundreds of in-memory cache clusters at Twitter", OSDI
// 2020 (traces: github.com/twitter/cache-trace). What we take from it is
// qualitative: popularity close to Zipf with exponents that are often above
// 1 (more skewed than earlier studies suggested); keys that are not much
// smaller than values and values that are mostly small, a few hundred bytes
// or less, with a long tail; a third or so of clusters that are write-heavy
// (more than 30 % writes) next to get-dominated ones; and TTLs that are
// mostly short (minutes to hours) with a minority of multi-day ones. The
// specific numbers below are ours, chosen inside those ranges, not values
// read off the paper's figures.
var builtins = map[string]string{
	"getset-90-10": `
name = "getset-90-10"
description = "uniform keys, 100-byte values, 90 % get / 10 % set; every key set before measuring"
prefill = true

[mix]
get = 0.9
set = 0.1

[[family]]
name = "key"
pattern = "key:{id}"
keys = 100000
alpha = 0.0
key_size = { dist = "fixed", value = 16 }
value_size = { dist = "fixed", value = 100 }
`,
	"zipf": `
name = "zipf"
description = "Zipf 0.99 over one million keys, 64-512 byte values, 90/10 get/set, read-through fill"
fill_on_miss = true

[mix]
get = 0.9
set = 0.1

[[family]]
name = "obj"
pattern = "obj:{id}"
keys = 1000000
alpha = 0.99
value_size = { dist = "uniform", min = 64, max = 512 }
`,
	"twitter-read": `
name = "twitter-read"
description = "get-dominated cache cluster: skewed popularity, small keys and values, short TTLs"
fill_on_miss = true

[mix]
get = 0.94
set = 0.05
delete = 0.01

[[family]]
name = "tweet"
pattern = "tw:{id}:v2"
keys = 2000000
alpha = 1.1
key_size = { dist = "uniform", min = 24, max = 48 }
value_size = { dist = "lognormal", median = 180, sigma = 1.1, min = 4, max = 65536 }
ttl = { dist = "empirical", table = [[300, 0.25], [1200, 0.35], [7200, 0.2], [259200, 0.2]] }
`,
	"twitter-write": `
name = "twitter-write"
description = "write-heavy cache cluster: 40 % sets, tiny values, minute-scale TTLs"
fill_on_miss = true

[mix]
get = 0.58
set = 0.4
delete = 0.02

[[family]]
name = "session"
pattern = "s:{id}"
keys = 1000000
alpha = 0.9
key_size = { dist = "uniform", min = 20, max = 40 }
value_size = { dist = "lognormal", median = 60, sigma = 0.8, min = 2, max = 4096 }
ttl = { dist = "empirical", table = [[60, 0.3], [300, 0.4], [900, 0.3]] }
`,
	"twitter-mixed": `
name = "twitter-mixed"
description = "three key families with different skew and sizes; mostly gets, some CAS reads"
fill_on_miss = true

[mix]
get = 0.78
set = 0.15
delete = 0.02
gets = 0.05

[[family]]
name = "timeline"
pattern = "tl:{id}"
keys = 500000
weight = 0.5
alpha = 1.2
key_size = { dist = "uniform", min = 16, max = 32 }
value_size = { dist = "lognormal", median = 420, sigma = 1.0, min = 16, max = 131072 }
ttl = { dist = "fixed", value = 1200 }

[[family]]
name = "counter"
pattern = "u:{id}:cnt"
keys = 2000000
weight = 0.3
alpha = 0.9
value_size = { dist = "fixed", value = 8 }
ttl = { dist = "fixed", value = 600 }

[[family]]
name = "object"
pattern = "obj:{id}"
keys = 1000000
weight = 0.2
alpha = 1.0
key_size = { dist = "uniform", min = 24, max = 64 }
value_size = { dist = "empirical", table = [[64, 0.3], [256, 0.4], [1024, 0.2], [8192, 0.1]] }
ttl = { dist = "empirical", table = [[3600, 0.6], [259200, 0.4]] }
`,
	"multicluster-zipf": `
# Shaped after the long-tail paper's photo family: with Zipf 1.0 over 400 000
# keys the hottest 10 % of keys draw about 80 % of the requests, and most keys
# can be read from any frontend cluster.
name = "multicluster-zipf"
description = "four frontend clusters over one key family, 90 % of each cluster's keys shared, Zipf 1.0, read-through"
clusters = 4
overlap = 0.9
fill_on_miss = true

[mix]
get = 0.95
set = 0.05

[[family]]
name = "photo"
pattern = "photo:{id}:meta"
keys = 400000
alpha = 1.0
value_size = { dist = "lognormal", median = 200, sigma = 0.7, min = 16, max = 8192 }
`,
}

// BuiltinNames lists the built-in profiles in name order.
func BuiltinNames() []string {
	names := make([]string, 0, len(builtins))
	for n := range builtins {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Builtin returns a fresh copy of a built-in profile.
func Builtin(name string) (*Profile, bool) {
	src, ok := builtins[name]
	if !ok {
		return nil, false
	}
	p, err := Parse("builtin:"+name, []byte(src))
	if err != nil {
		panic(fmt.Sprintf("built-in profile %s: %v", name, err)) // a defect caught by the tests
	}
	return p, true
}

// Lookup resolves a --profile argument: a built-in name, else a TOML file.
func Lookup(nameOrFile string) (*Profile, error) {
	if p, ok := Builtin(nameOrFile); ok {
		return p, nil
	}
	if _, err := os.Stat(nameOrFile); err != nil && !strings.ContainsAny(nameOrFile, "./") {
		return nil, fmt.Errorf("profile %q: not a built-in (%s) and not a file", nameOrFile, strings.Join(BuiltinNames(), ", "))
	}
	return LoadFile(nameOrFile)
}
