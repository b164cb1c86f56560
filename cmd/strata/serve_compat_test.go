package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-cache/strata/config"
	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/nutcrackertest"
)

// TestCompatPoolReadsAFleetFilledByTwemproxy: four memcached filled through
// nutcracker (ketama, unequal weights, server names, a hash tag), then read
// through strata configured by `strata config import twemproxy` of the
// same YAML: every key hits, and each memcached serves exactly the gets
// nutcracker itself sent it for the same keys. Under md5, strata's pool
// places gets in batches; strata is read one get at a time and in
// pipelines of 32, which fill them.
func TestCompatPoolReadsAFleetFilledByTwemproxy(t *testing.T) {
	for _, hash := range []string{"fnv1a_64", "md5"} {
		t.Run(hash, func(t *testing.T) { readAFleetFilledByTwemproxy(t, hash) })
	}
}

func readAFleetFilledByTwemproxy(t *testing.T, hash string) {
	const n = 2000
	var ms []*memcachedtest.Server
	var yaml strings.Builder
	yaml.WriteString("  hash: " + hash + "\n  distribution: ketama\n  hash_tag: \"{}\"\n  timeout: 2000\n  servers:\n")
	for i, w := range []int{1, 2, 1, 3} {
		m := memcachedtest.Start(t)
		ms = append(ms, m)
		fmt.Fprintf(&yaml, "   - %s:%d cache-%d\n", m.Addr, w, i)
	}
	proxy := nutcrackertest.Start(t, yaml.String())
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "user:" + strconv.Itoa(i*7919) + ":profile"
		if i%4 == 0 {
			keys[i] = "{cart" + strconv.Itoa(i%50) + "}:" + strconv.Itoa(i)
		}
	}
	nc := mctext.Dial(t, proxy)
	for _, k := range keys {
		if r := nc.Set(k, "v"+k, 0); r != "STORED" {
			t.Fatalf("set %s through nutcracker: %q", k, r)
		}
	}
	hits := func() []int {
		out := make([]int, len(ms))
		for i, m := range ms {
			c := mctext.Dial(t, m.Addr)
			out[i], _ = strconv.Atoi(c.Stats("")["get_hits"])
			c.Close()
		}
		return out
	}
	readAll := func(addr string) int {
		c := mctext.Dial(t, addr)
		defer c.Close()
		found := 0
		for _, k := range keys {
			if v, ok := c.Get(k); ok && v == "v"+k {
				found++
			}
		}
		return found
	}
	h0 := hits()
	if got := readAll(proxy); got != n {
		t.Fatalf("nutcracker found %d of %d keys it stored", got, n)
	}
	h1 := hits()
	// The import's listen is nutcracker's; startApp's --listen replaces it.
	yml := writeFile(t, "nutcracker.yml", "alpha:\n  listen: "+proxy+"\n"+yaml.String())
	var imported strings.Builder
	if err := config.Command([]string{"import", "twemproxy", yml}, &imported, io.Discard); err != nil {
		t.Fatalf("config import: %v", err)
	}
	ta := startApp(t, imported.String())
	nut := make([]int, len(ms))
	for i := range ms {
		nut[i] = h1[i] - h0[i]
	}
	for _, read := range []struct {
		how  string
		read func(string) int
	}{{"one by one", readAll}, {"in pipelines", readPipelined(t, keys)}} {
		found := read.read(ta.proxy.Addr())
		h2 := hits()
		t.Logf("hit ratio through strata, %s: %.2f%% (%d of %d)", read.how, 100*float64(found)/n, found, n)
		if found != n {
			t.Fatalf("strata found %d of %d keys, %s", found, n, read.how)
		}
		got := make([]int, len(ms))
		for i := range ms {
			if got[i] = h2[i] - h1[i]; got[i] != nut[i] {
				t.Errorf("server %d: %d get_hits through strata %s, %d through nutcracker", i, got[i], read.how, nut[i])
			}
		}
		t.Logf("get_hits per server through nutcracker %v, through strata %s %v", nut, read.how, got)
		h1 = h2
	}
}

// readPipelined reads keys from addr 32 gets at a time, each a command of
// its own sent in one write, and counts the values that are "v" + key.
func readPipelined(t *testing.T, keys []string) func(string) int {
	return func(addr string) int {
		c := mctext.Dial(t, addr)
		defer c.Close()
		found := 0
		for len(keys) > 0 {
			batch := keys[:min(32, len(keys))]
			keys = keys[len(batch):]
			var req strings.Builder
			for _, k := range batch {
				req.WriteString("get " + k + "\r\n")
			}
			c.Send(req.String())
			for _, k := range batch {
				l := c.ReadLine()
				if l == "END" {
					continue
				}
				f := strings.Fields(l)
				if len(f) != 4 || f[0] != "VALUE" || f[1] != k {
					t.Fatalf("get %s: %q", k, l)
				}
				size, _ := strconv.Atoi(f[3])
				if c.ReadBlock(size) == "v"+k {
					found++
				}
				if end := c.ReadLine(); end != "END" {
					t.Fatalf("get %s: %q after the value", k, end)
				}
			}
		}
		return found
	}
}

// TestCompatSettingsAreRefusedByKey: a compat setting the pool refuses is
// reported on its key, and strata does not start.
func TestCompatSettingsAreRefusedByKey(t *testing.T) {
	for _, c := range []struct{ cfg, key string }{
		{"[l2]\nservers = [\"127.0.0.1:11311\"]\ncompat = \"twemproxy\"\ndistribution = \"random\"\n", "l2.distribution"},
		{"[l2]\nservers = [\"127.0.0.1:11311\"]\ncompat = \"nginx\"\n", "l2.compat"},
		{"[l2]\nservers = [\"127.0.0.1:11311\"]\ncompat = \"twemproxy\"\nhash = \"sha1\"\n", "l2.hash"},
		{"[l2]\nservers = [\"127.0.0.1:11311:2\"]\ncompat = \"gomemcache\"\n", "l2.servers"},
		{"[l2]\nservers = [\"127.0.0.1:11311\"]\nhash_tag = \"{}\"\n", "l2.hash_tag"},
	} {
		path := writeFile(t, "strata.toml", c.cfg)
		f, err := config.ParseFlags([]string{"--config", path}, nil)
		if err == nil {
			_, err = config.Load(f.Path, f)
		}
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%q: %v, want an error on %s", c.cfg, err, c.key)
		}
	}
}

// TestConfigImportMcrouterLoads: `strata config import mcrouter` writes a
// file strata loads, with the compat layout of the route's pool; usage
// mistakes are usage errors.
func TestConfigImportMcrouterLoads(t *testing.T) {
	in := writeFile(t, "mcrouter.json", `{
  // one pool, hashed with Crc32
  "pools": {"main": {"servers": ["127.0.0.1:11311", "127.0.0.1:11312"]}},
  "route": {"type": "HashRoute", "children": "Pool|main", "hash_func": "Crc32"}
}`)
	var out strings.Builder
	if err := config.Command([]string{"import", "mcrouter", in}, &out, io.Discard); err != nil {
		t.Fatalf("import: %v", err)
	}
	s, err := config.Load(writeFile(t, "strata.toml", out.String()), nil)
	if err != nil {
		t.Fatalf("the imported file does not load: %v\n%s", err, out.String())
	}
	if pc := s.L2.PoolConfig(s.L2.MaxItemSize, discardLog()); pc.Compat != "mcrouter-crc32" || len(pc.Servers) != 2 {
		t.Fatalf("pool: compat %q, servers %v", pc.Compat, pc.Servers)
	}
	for _, args := range [][]string{{"import"}, {"import", "nginx", in}, {"import", "mcrouter", in, "pool"}} {
		if err := config.Command(args, io.Discard, io.Discard); !errors.Is(err, config.ErrUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}
