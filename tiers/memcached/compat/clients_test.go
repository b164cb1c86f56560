package compat_test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/bradfitz/gomemcache/memcache"
	"github.com/strata-cache/strata/internal/testbin"
	"github.com/strata-cache/strata/tiers/memcached/compat"
)

// python3 is the interpreter the Debian client packages install into.
func python3(t *testing.T) string {
	t.Helper()
	return testbin.Require(t, "python3-pylibmc python3-pymemcache python3-memcache",
		"STRATA_SKIP_PYTHON_CLIENTS", "/usr/bin/python3")
}

// setThroughPython writes keys through testdata/incumbent.py in mode.
func setThroughPython(t *testing.T, mode string, f fleet, weights []int, keys []string) {
	t.Helper()
	var spec []string
	for i, p := range f.ports {
		spec = append(spec, fmt.Sprintf("127.0.0.1:%d:%d", p, weights[i]))
	}
	cmd := exec.Command(python3(t), "testdata/incumbent.py", mode, strings.Join(spec, ","))
	cmd.Stdin = strings.NewReader(strings.Join(keys, "\n") + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", mode, err, out)
	}
}

// TestClientsAgainstIncumbents writes keys through each client that shards
// by itself and checks the layout places each on the server it chose.
func TestClientsAgainstIncumbents(t *testing.T) {
	f := startFleet(t)
	ones := []int{1, 1, 1, 1}
	weights := []int{1, 2, 1, 3}
	for i, r := range []struct {
		mode    string // incumbent.py's, or "gomemcache"
		spec    compat.Spec
		weights []int
	}{
		{"pylibmc-ketama", compat.Spec{Scheme: compat.LibmemcachedKetama}, ones},
		{"pylibmc-ketama-md5", compat.Spec{Scheme: compat.LibmemcachedKetama, Hash: "md5"}, ones},
		{"pylibmc-ketama-crc", compat.Spec{Scheme: compat.LibmemcachedKetama, Hash: "crc32"}, ones},
		{"pylibmc-ketama-fnv1_64", compat.Spec{Scheme: compat.LibmemcachedKetama, Hash: "fnv1_64"}, ones},
		{"pylibmc-ketama-fnv1a_64", compat.Spec{Scheme: compat.LibmemcachedKetama, Hash: "fnv1a_64"}, ones},
		{"pylibmc-ketama-fnv1_32", compat.Spec{Scheme: compat.LibmemcachedKetama, Hash: "fnv1_32"}, ones},
		{"pylibmc-ketama-fnv1a_32", compat.Spec{Scheme: compat.LibmemcachedKetama, Hash: "fnv1a_32"}, ones},
		{"pylibmc-ketama_weighted", compat.Spec{Scheme: compat.LibmemcachedKetama, Distribution: compat.KetamaWeighted}, ones},
		{"pylibmc-ketama_weighted", compat.Spec{Scheme: compat.LibmemcachedKetama, Distribution: compat.KetamaWeighted}, weights},
		{"pylibmc-ketama-md5", compat.Spec{Scheme: compat.LibmemcachedKetama, Hash: "md5"}, weights},
		{"pylibmc-ketama", compat.Spec{Scheme: compat.LibmemcachedKetama}, weights},
		{"pymemcache", compat.Spec{Scheme: compat.Pymemcache}, ones},
		{"pymemcache:12345", compat.Spec{Scheme: compat.Pymemcache, Seed: 12345}, ones},
		{"python-memcached", compat.Spec{Scheme: compat.PythonMemcached}, ones},
		{"python-memcached", compat.Spec{Scheme: compat.PythonMemcached}, weights},
		{"gomemcache", compat.Spec{Scheme: compat.Gomemcache}, ones},
	} {
		t.Run(fmt.Sprintf("%s/weights=%v", r.mode, r.weights), func(t *testing.T) {
			f.flush(t)
			keys := testKeys(incumbentKeys, uint64(100+i), r.mode == "gomemcache", false)
			if r.mode == "gomemcache" {
				mc := memcache.New(f.addrs...)
				for _, k := range keys {
					if err := mc.Set(&memcache.Item{Key: k, Value: []byte("v")}); err != nil {
						t.Fatalf("gomemcache set %q: %v", k, err)
					}
				}
			} else {
				setThroughPython(t, r.mode, f, r.weights, keys)
			}
			l, err := compat.New(r.spec, f.servers(r.weights, nil))
			if err != nil {
				t.Fatal(err)
			}
			assertPlacement(t, l, keys, holders(t, f, keys))
		})
	}
}
