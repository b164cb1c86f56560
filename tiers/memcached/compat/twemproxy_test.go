package compat_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-cache/strata/internal/nutcrackertest"
	"github.com/strata-cache/strata/tiers/memcached/compat"
)

// nutcrackerPool is the YAML body of a pool over f.
func nutcrackerPool(f fleet, spec compat.Spec, weights []int, names []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  hash: %s\n  distribution: %s\n  timeout: 2000\n  auto_eject_hosts: false\n", spec.Hash, spec.Distribution)
	if spec.HashTag != "" {
		fmt.Fprintf(&b, "  hash_tag: %q\n", spec.HashTag)
	}
	b.WriteString("  servers:\n")
	for i, a := range f.addrs {
		fmt.Fprintf(&b, "   - %s:%d", a, weights[i])
		if names != nil {
			fmt.Fprintf(&b, " %s", names[i])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestTwemproxyAgainstNutcracker writes keys through nutcracker for every
// hash under both reproducible distributions, with unequal weights, then
// with server names and with a hash tag, and checks the layout places each
// key on the server nutcracker chose.
func TestTwemproxyAgainstNutcracker(t *testing.T) {
	f := startFleet(t)
	weights := []int{1, 2, 1, 3}
	type run struct {
		name    string
		spec    compat.Spec
		weights []int
		names   []string
		tags    bool
	}
	var runs []run
	for _, h := range compat.HashNames {
		for _, d := range []string{"ketama", "modula"} {
			runs = append(runs, run{name: d + "/" + h, spec: compat.Spec{Scheme: compat.Twemproxy, Hash: h, Distribution: d}, weights: weights})
		}
	}
	runs = append(runs,
		run{name: "ketama/names", spec: compat.Spec{Scheme: compat.Twemproxy, Hash: "fnv1a_64", Distribution: "ketama"},
			weights: []int{1, 1, 1, 1}, names: []string{"cache-a", "cache-b", "cache-c", "cache-d"}},
		run{name: "modula/names", spec: compat.Spec{Scheme: compat.Twemproxy, Hash: "fnv1a_64", Distribution: "modula"},
			weights: weights, names: []string{"cache-bb", "cache-a", "c", "zz"}},
		run{name: "ketama/hash_tag", spec: compat.Spec{Scheme: compat.Twemproxy, Hash: "murmur", Distribution: "ketama", HashTag: "{}"},
			weights: weights, tags: true},
		run{name: "modula/hash_tag", spec: compat.Spec{Scheme: compat.Twemproxy, Hash: "crc32a", Distribution: "modula", HashTag: "{}"},
			weights: weights, tags: true},
	)
	for i, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			f.flush(t)
			keys := testKeys(incumbentKeys, uint64(i), true, r.tags)
			proxy := nutcrackertest.Start(t, nutcrackerPool(f, r.spec, r.weights, r.names))
			setThrough(t, proxy, keys)
			l, err := compat.New(r.spec, f.servers(r.weights, r.names))
			if err != nil {
				t.Fatal(err)
			}
			assertPlacement(t, l, keys, holders(t, f, keys))
		})
	}
}
