package confimport

import (
	"errors"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

const sample = `alpha:
  listen: 127.0.0.1:22121
  hash: murmur
  hash_tag: "{}"
  distribution: modula
  timeout: 400
  backlog: 1024
  preconnect: true
  auto_eject_hosts: true
  server_retry_timeout: 2000
  server_failure_limit: 1
  servers:
   - 10.0.0.1:11211:1 cache-a
   - 10.0.0.2:11212:2 cache-b
beta:
  listen: 127.0.0.1:22122
  servers:
   - 10.0.0.3:11211:1
`

// imported is the part of strata's TOML the importer writes.
type imported struct {
	Server struct{ Listen string }
	L1     struct{ Kind string }
	L2     struct {
		Servers                    []string
		Compat, Hash, Distribution string
		HashTag                    string `toml:"hash_tag"`
		Timeout                    string
		ProbeInterval              string `toml:"probe_interval"`
		FailureThreshold           int    `toml:"failure_threshold"`
		RehashOnDown               bool   `toml:"rehash_on_down"`
	}
}

func decode(t *testing.T, out string) imported {
	t.Helper()
	var got imported
	md, err := toml.Decode(out, &got)
	if err != nil {
		t.Fatalf("the output is not TOML: %v\n%s", err, out)
	}
	_ = md
	return got
}

func TestTwemproxyTranslatesEveryKey(t *testing.T) {
	out, err := Twemproxy("nutcracker.yml", []byte(sample), "alpha")
	if err != nil {
		t.Fatal(err)
	}
	got := decode(t, out)
	l2 := got.L2
	if got.Server.Listen != "127.0.0.1:22121" || got.L1.Kind != "none" || l2.Compat != "twemproxy" ||
		l2.Hash != "murmur" || l2.Distribution != "modula" || l2.HashTag != "{}" || l2.Timeout != "400ms" ||
		l2.FailureThreshold != 1 || l2.ProbeInterval != "2s" || !l2.RehashOnDown ||
		strings.Join(l2.Servers, ",") != "10.0.0.1:11211:1 cache-a,10.0.0.2:11212:2 cache-b" {
		t.Fatalf("translation: %+v\n%s", got, out)
	}
	for _, want := range []string{
		"hash: murmur (nutcracker.yml:3)",
		"# not carried over: backlog: 1024 (nutcracker.yml:7)",
		"# not carried over: preconnect: true (nutcracker.yml:8)",
		"auto_eject_hosts: true (nutcracker.yml:9)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output does not say %q:\n%s", want, out)
		}
	}
	// Defaults are twemproxy's, and said so.
	out, err = Twemproxy("nutcracker.yml", []byte(sample), "beta")
	if err != nil {
		t.Fatal(err)
	}
	got = decode(t, out)
	if got.L2.Hash != "fnv1a_64" || got.L2.Distribution != "ketama" || got.L2.FailureThreshold != 2 ||
		got.L2.ProbeInterval != "30s" || got.L2.RehashOnDown || got.L2.Timeout != "" {
		t.Fatalf("defaults: %+v\n%s", got, out)
	}
	if !strings.Contains(out, "twemproxy's default fnv1a_64") || !strings.Contains(out, "twemproxy waits forever") {
		t.Errorf("defaults not explained:\n%s", out)
	}
}

// TestTwemproxyErrorsNameFileLineKey: each refusal is FILE:LINE: key.
func TestTwemproxyErrorsNameFileLineKey(t *testing.T) {
	for _, c := range []struct {
		name, yaml, pool, want string
	}{
		{"two pools, none named", sample, "", "f.yml:1: (file): name the pool to import: one of alpha, beta"},
		{"no such pool", sample, "gamma", "f.yml:1: (file): name the pool"},
		{"random", "a:\n  listen: 127.0.0.1:1\n  distribution: random\n  servers:\n   - 10.0.0.1:1:1\n", "", "f.yml:3: a.distribution: random distribution cannot be reproduced"},
		{"unknown hash", "a:\n  listen: 127.0.0.1:1\n  hash: sha1\n  servers:\n   - 10.0.0.1:1:1\n", "", "f.yml:3: a.hash: unknown hash"},
		{"redis", "a:\n  listen: 127.0.0.1:1\n  redis: true\n  servers:\n   - 10.0.0.1:1:1\n", "", "f.yml:3: a.redis: a redis pool"},
		{"unix socket", "a:\n  listen: 127.0.0.1:1\n  servers:\n   - 10.0.0.1:1:1\n   - /tmp/mc.sock:1\n", "", "f.yml:5: a.servers[1]: "},
		{"bad weight", "a:\n  listen: 127.0.0.1:1\n  servers:\n   - 10.0.0.1:1:0\n", "", "f.yml:4: a.servers[0]: weight 0"},
		{"timeout", "a:\n  listen: 127.0.0.1:1\n  timeout: soon\n  servers:\n   - 10.0.0.1:1:1\n", "", "f.yml:3: a.timeout: \"soon\" is not an integer"},
		{"unknown key", "a:\n  listen: 127.0.0.1:1\n  hashtag: \"{}\"\n  servers:\n   - 10.0.0.1:1:1\n", "", "f.yml:3: a.hashtag: unknown twemproxy setting"},
		{"duplicate names", "a:\n  listen: 127.0.0.1:1\n  servers:\n   - 10.0.0.1:1:1 x\n   - 10.0.0.2:1:1 x\n", "", "f.yml:3: a.servers: two servers named \"x\""},
		{"no servers", "a:\n  listen: 127.0.0.1:1\n", "", "f.yml:2: a.servers: missing"},
		{"syntax", "a:\n  listen: [\n", "", "f.yml:"},
	} {
		_, err := Twemproxy("f.yml", []byte(c.yaml), c.pool)
		var e *Error
		if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q…", c.name, err, c.want)
		}
	}
}

// FuzzTwemproxy: on any input the importer either refuses it with a
// FILE:LINE: key: error, or writes TOML that decodes and names the compat
// layout.
func FuzzTwemproxy(f *testing.F) {
	f.Add(sample, "alpha")                                                                                       // every key, two pools
	f.Add("a:\n  listen: 127.0.0.1:1\n  servers:\n   - 10.0.0.1:1:1\n", "")                                      // the least
	f.Add("a:\n  listen: 127.0.0.1:1\n  hash_tag: \"\\\"\\\\\"\n  servers:\n   - \"10.0.0.1:1:1 n\\\"m\"\n", "") // quotes to escape
	f.Add("a: [1, 2]\n", "")                                                                                     // a pool that is not a mapping
	f.Add("- 1\n- 2\n", "")                                                                                      // a file that is not a mapping
	f.Add("a:\n  listen: &x 1\n  hash: *x\n", "")                                                                // anchors
	f.Fuzz(func(t *testing.T, yaml, pool string) {
		out, err := Twemproxy("f.yml", []byte(yaml), pool)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), "f.yml:") {
				t.Fatalf("error not placed: %v", err)
			}
			return
		}
		got := decode(t, out)
		if got.L2.Compat != "twemproxy" || len(got.L2.Servers) == 0 || got.Server.Listen == "" {
			t.Fatalf("incomplete translation: %+v\n%s", got, out)
		}
	})
}
