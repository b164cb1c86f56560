package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/tiers/promote"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// run is strata's main for the config command: its exit code, with the
// command's error printed as main prints it.
func run(args []string, stdout, stderr io.Writer) int {
	err := Command(args[1:], stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrUsage):
		return 2
	}
	fmt.Fprintf(stderr, "strata config: %v\n", err)
	return 1
}

// checkConfig runs `strata config check FILE` in process and returns the
// exit code and what it printed.
func checkConfig(t *testing.T, path string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run([]string{"config", "check", path}, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

const fullConfig = `# every section
[server]
listen = "127.0.0.1:21211"
cluster = "c1"
region = "r1"
loops = 2
merge_loops = false
drain_timeout = "3s"

[l1]
servers = ["127.0.0.1:31001", { addr = "127.0.0.1:31002", weight = 2 }]
max_ttl = "45s"
timeout = "100ms"
dial_timeout = "2s"
failure_threshold = 5
probe_interval = "500ms"
rehash_on_down = true
shards = 1024

[l2]
kind = "embedded"
memory = "256MiB"

[promotion]
threshold = 16
[[promotion.rule]]
prefix = "photos:"
threshold = 64
[[promotion.rule]]
prefix = "feed:"
threshold = 4

[sampler]
rate = 100
dir = "/var/lib/strata/samples"
rotate_size = "10MB"
rotate_age = "30m"
gzip = true
window = "2h"
[[sampler.family]]
match = '^(\w+):session:'
family = "$1:session:*"

[limits]
max_item_size = "2MiB"
max_inflight = 64
max_outbound_bytes = "1MiB"
flush_all = true

[log]
format = "json"
level = "debug"

[admin]
listen = "127.0.0.1:21299"
`

func TestEverySectionParses(t *testing.T) {
	path := writeFile(t, "strata.toml", fullConfig)
	s, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Proxy.Listen != "127.0.0.1:21211" || s.Proxy.Loops != 2 || s.Proxy.MergeLoops || s.DrainTimeout != 3*time.Second {
		t.Errorf("server: %+v, drain %v", s.Proxy, s.DrainTimeout)
	}
	if s.Proxy.Limits.MaxItemSize != 2<<20 || s.Proxy.MaxInflight != 64 || s.Proxy.MaxOutboundBytes != 1<<20 || s.Proxy.Limits.DisableFlush {
		t.Errorf("limits: %+v", s.Proxy)
	}
	l1 := s.L1
	if l1.Kind != KindMemcached || len(l1.Servers) != 2 || l1.Servers[0] != (ServerEntry{Addr: "127.0.0.1:31001", Weight: 1}) || l1.Servers[1] != (ServerEntry{Addr: "127.0.0.1:31002", Weight: 2}) {
		t.Errorf("l1: %+v", l1)
	}
	pc := l1.PoolConfig(l1.MaxItemSize, slog.New(slog.DiscardHandler))
	if pc.RequestTimeout != 100*time.Millisecond || pc.DialTimeout != 2*time.Second || pc.FailureThreshold != 5 ||
		pc.ProbeInterval != 500*time.Millisecond || !pc.RehashOnDown || pc.Shards != 1024 || pc.MaxItemSize != 2<<20 ||
		len(pc.Servers) != 2 || pc.Servers[1].Weight != 2 {
		t.Errorf("pool config: %+v", pc)
	}
	if s.L2.Kind != KindEmbedded || s.L2.Embedded.MaxBytes != 256<<20 || s.L2.Embedded.MaxItemSize != 2<<20 {
		t.Errorf("l2: %+v", s.L2)
	}
	wantRules := []promote.Rule{{Prefix: "photos:", Threshold: 64}, {Prefix: "feed:", Threshold: 4}}
	if s.Layered.Threshold != 16 || !reflect.DeepEqual(s.Layered.Rules, wantRules) || s.Layered.L1MaxTTL != 45*time.Second {
		t.Errorf("promotion: %+v", s.Layered)
	}
	sc := s.Sampler
	if sc.Rate != 100 || sc.Dir != "/var/lib/strata/samples" || sc.MaxFileBytes != 10e6 || sc.MaxFileAge != 30*time.Minute ||
		!sc.Gzip || sc.Window != 2*time.Hour || sc.Cluster != "c1" || sc.Region != "r1" ||
		len(sc.Families) != 1 || sc.Families[0].Family != "$1:session:*" {
		t.Errorf("sampler: %+v", sc)
	}
	if s.LogFormat != "json" || s.LogLevel != slog.LevelDebug {
		t.Errorf("log: %s %v", s.LogFormat, s.LogLevel)
	}
	if s.Admin.Listen != "127.0.0.1:21299" || s.Admin.Token != "" {
		t.Errorf("admin: %+v", s.Admin)
	}
	if code, out, errOut := checkConfig(t, path); code != 0 || !strings.Contains(out, path+": ok") {
		t.Errorf("config check: exit %d, %q %q", code, out, errOut)
	}
}

func TestSingleTierAndDefaults(t *testing.T) {
	s, err := Load(writeFile(t, "one.toml", "[l1]\nkind = \"none\"\n[l2]\nservers = [\"127.0.0.1:31001\"]\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.L1.Kind != KindNone || s.L2.Kind != KindMemcached {
		t.Fatalf("kinds %s %s", s.L1.Kind, s.L2.Kind)
	}
	if !s.Proxy.Limits.DisableFlush {
		t.Fatal("flush_all allowed by default over a memcached pool")
	}
	d, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.L1.Kind != KindEmbedded || d.L1.Embedded.MaxBytes != 64<<20 || d.L2.Embedded.MaxBytes != 1<<30 ||
		d.Proxy.Listen != "127.0.0.1:11211" || d.Admin.Listen != "127.0.0.1:11299" || d.Layered.Threshold != 32 ||
		d.Layered.L1MaxTTL != time.Minute || d.DrainTimeout != 10*time.Second || d.Proxy.Limits.DisableFlush || d.Sampler.Rate != 1_000_000 ||
		!d.Proxy.MergeLoops {
		t.Fatalf("defaults: %+v", d)
	}
}

func TestMisspeltKeyReportsKeyAndLine(t *testing.T) {
	path := writeFile(t, "typo.toml", "# a comment\n[server]\nlisten = \"127.0.0.1:11211\"\n\n[l1]\nmemroy = \"64MiB\"\n")
	code, out, errOut := checkConfig(t, path)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (stdout %q)", code, out)
	}
	want := path + ":6: l1.memroy: unknown key"
	if !strings.Contains(errOut, want) || !strings.Contains(errOut, `did you mean "memory"?`) {
		t.Fatalf("stderr %q does not contain %q", errOut, want)
	}
}

func TestErrorsNameKeyAndLine(t *testing.T) {
	cases := []struct{ name, file, want string }{
		{"bad size", "[l2]\nkind = \"embedded\"\nmemory = \"lots\"\n", ":3: l2.memory: size \"lots\""},
		{"size without number", "[limits]\n\nmax_item_size = \"MiB\"\n", ":3: limits.max_item_size:"},
		{"bad duration", "[l1]\nmax_ttl = \"soon\"\n", ":2: l1.max_ttl: \"soon\" is not a duration"},
		{"duration without unit", "[server]\ndrain_timeout = 10\n", ":2: server.drain_timeout: duration \"10\" has no unit"},
		{"duration out of range", "[l1]\nmax_ttl = \"1ms\"\n", ":2: l1.max_ttl: 1ms is out of range"},
		{"relative handoff socket", "[server]\nhandoff_socket = \"run/h.sock\"\n", ":2: server.handoff_socket: \"run/h.sock\": want an absolute path"},
		{"wrong type", "[promotion]\nthreshold = \"many\"\n", ":2: promotion.threshold:"},
		{"threshold zero", "\n[promotion]\nthreshold = 0\n", ":3: promotion.threshold: 0 is out of range"},
		{"negative rate", "[sampler]\nrate = -5\n", ":2: sampler.rate: -5 is negative"},
		{"second rule", "[[promotion.rule]]\nprefix = \"a\"\nthreshold = 2\n\n[[promotion.rule]]\nprefix = \"b\"\nthreshold = 0\n", ":7: promotion.rule[1].threshold: 0 is out of range"},
		{"typo in second rule", "[[promotion.rule]]\nprefix = \"a\"\nthreshold = 2\n[[promotion.rule]]\nprefix = \"b\"\ntreshold = 3\n", ":6: promotion.rule[1].treshold: unknown key"},
		{"unknown section", "[metrics]\nport = 1\n", ":1: metrics: unknown section"},
		{"upper case key", "[l1]\nMemory = \"64MiB\"\n", ":2: l1.Memory: unknown key"},
		{"server entry key", "[l2]\nservers = [{addr = \"127.0.0.1:1\", wieght = 2}]\n", ":2: l2.servers: unknown key \"wieght\""},
		{"server without port", "[l2]\nservers = [\"127.0.0.1\"]\n", ":2: l2.servers: server \"127.0.0.1\": want host:port"},
		{"server twice", "[l2]\nservers = [\"127.0.0.1:1\",\n  \"127.0.0.1:1\"]\n", ":2: l2.servers: 127.0.0.1:1 is listed twice"},
		{"memory and servers", "[l2]\nservers = [\"127.0.0.1:1\"]\nmemory = \"1GiB\"\n", ":3: l2.memory: memory sizes an embedded tier"},
		{"snapshot and servers", "[l2]\nservers = [\"127.0.0.1:1\"]\nsnapshot = \"/tmp/x\"\n", ":3: l2.snapshot: snapshot saves an embedded tier"},
		{"snapshot in no directory", "[l1]\nsnapshot = \"/no/such/dir/l1.snap\"\n", ":2: l1.snapshot: "},
		{"l2 none", "[l2]\nkind = \"none\"\n", ":2: l2.kind: the L2 tier is required"},
		{"max_ttl on l2", "[l2]\nmax_ttl = \"10s\"\n", ":2: l2.max_ttl:"},
		{"bad kind", "[l1]\nkind = \"redis\"\n", ":2: l1.kind: \"redis\""},
		{"log level", "[log]\nlevel = \"loud\"\n", ":2: log.level: \"loud\""},
		{"exposed admin", "[admin]\nlisten = \"0.0.0.0:11299\"\n", ":2: admin.listen: \"0.0.0.0:11299\" is reachable from other hosts"},
		{"missing token file", "[admin]\ntoken_file = \"/nonexistent/token\"\n", ":2: admin.token_file: reading the token"},
		{"allowed host with a port", "[admin]\nallowed_hosts = [\"cache.local:11299\"]\n", ":2: admin.allowed_hosts: \"cache.local:11299\""},
		{"bad family regexp", "[[sampler.family]]\nmatch = \"(\"\nfamily = \"x\"\n", ":1: sampler.family[0]:"},
		{"pool option range", "[l1]\nservers = [\"127.0.0.1:1\"]\nfailure_threshold = 0\n", ":3: l1.failure_threshold: 0 is out of range"},
		{"pool option above the pool's bound", "[l2]\nservers = [\"127.0.0.1:1\"]\n\ntimeout = \"2m\"\n", ":4: l2.timeout: 2m0s is out of range: 1ms to 1m0s"},
		{"loops above the proxy's bound", "[server]\nloops = 5000\n", ":2: server.loops: 5000 is out of range: 0 (one per CPU) to 1024"},
		{"inflight zero", "[limits]\nmax_inflight = 0\n", ":2: limits.max_inflight: 0 is out of range: 1 to 1048576"},
		{"inflight above the proxy's bound", "[limits]\nmax_inflight = 2000000\n", ":2: limits.max_inflight: 2000000 is out of range: 1 to 1048576"},
		{"outbound too small", "[limits]\nmax_outbound_bytes = \"1KiB\"\n", ":2: limits.max_outbound_bytes: 1024 is too small: at least 64KiB"},
		{"hot-key hold above a day", "[hotkeys]\nhold = \"25h\"\n", ":2: hotkeys.hold: 25h0m0s is out of range: 1s to 24h"},
		{"hot-key rate zero", "[hotkeys]\n\nrate = 0\n", ":3: hotkeys.rate: 0 is out of range"},
		{"pool servers", "[l2]\nkind = \"memcached\"\n", ":1: l2.servers: a pool needs at least one server"},
		{"pool shards too many", "[l2]\nservers = [\"127.0.0.1:1\"]\nshards = 2000000\n", ":3: l2.shards: 2000000 is out of range: 1 to 1048576"},
		{"tls verify", "[tls]\ncert = \"c.pem\"\nkey = \"k.pem\"\nca = \"ca.pem\"\nverify = \"maybe\"\n", ":5: tls.verify: \"maybe\""},
		{"tls verify without ca", "[tls]\ncert = \"c.pem\"\nkey = \"k.pem\"\nverify = \"require\"\n", ":4: tls.verify: \"require\" verifies client certificates: it needs ca"},
		{"tls cert without key", "[tls]\ncert = \"c.pem\"\n", ":2: tls.cert: cert and key go together"},
		{"pool ca without tls", "[l2]\nservers = [\"127.0.0.1:1\"]\nca = \"ca.pem\"\n", ":1: l2.tls: ca, cert, key or server_name without tls = true"},
		{"plain listener without tls", "[server]\nlisten_plain = \"127.0.0.1:1\"\n", ":2: server.listen_plain: a second plaintext listener is for a TLS one"},
		{"admin https without tls", "[admin]\ntls = true\n", ":2: admin.tls: HTTPS uses the memcached listener's certificate"},
		{"syntax", "[server]\nlisten = \"127.0.0.1:1\n", ":2:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, "bad.toml", c.file)
			code, _, errOut := checkConfig(t, path)
			if code != 1 {
				t.Fatalf("exit %d, want 1", code)
			}
			if !strings.Contains(errOut, path+c.want) {
				t.Fatalf("stderr %q does not contain %q", errOut, path+c.want)
			}
		})
	}
}

func TestEveryErrorIsReported(t *testing.T) {
	path := writeFile(t, "many.toml", "[server]\nlistn = \"x\"\n[l1]\nmax_ttl = \"0s\"\n[promotion]\nthreshold = -1\n")
	_, err := Load(path, nil)
	errs, ok := err.(Errors)
	if !ok || len(errs) != 2 {
		t.Fatalf("want 2 errors (unknown key, threshold), got %v", err)
	}
	if errs[0].Line != 2 || errs[0].Key != "server.listn" || errs[1].Line != 6 || errs[1].Key != "promotion.threshold" {
		t.Fatalf("errors out of order or misplaced: %v", errs)
	}
}

func TestFlagsOverrideFile(t *testing.T) {
	path := writeFile(t, "base.toml", fullConfig)
	tok := writeFile(t, "token", "s3cret\n")
	f, err := ParseFlags([]string{
		"--config", path, "--listen", "127.0.0.1:22211", "--admin", "127.0.0.1:22299",
		"--promotion-threshold", "3", "--cluster", "c9", "--region", "r9",
		"--l1", "none", "--l2", "127.0.0.1:32001,127.0.0.1:32002",
		"--sample-rate", "0", "--sample-dir", "", "--admin-token-file", tok, "--log-level", "warn",
	}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load(f.Path, f)
	if err != nil {
		t.Fatal(err)
	}
	if s.Proxy.Listen != "127.0.0.1:22211" || s.Admin.Listen != "127.0.0.1:22299" || s.Layered.Threshold != 3 ||
		s.Sampler.Cluster != "c9" || s.Sampler.Region != "r9" || s.Sampler.Rate != 0 || s.Sampler.Dir != "" ||
		s.Admin.Token != "s3cret" || s.LogLevel != slog.LevelWarn {
		t.Fatalf("flags not applied: %+v", s)
	}
	if s.L1.Kind != KindNone || s.L2.Kind != KindMemcached || len(s.L2.Servers) != 2 || s.L2.Servers[1].Addr != "127.0.0.1:32002" {
		t.Fatalf("tier flags not applied: l1 %+v l2 %+v", s.L1, s.L2)
	}
	// What no flag touches still comes from the file.
	if s.Layered.L1MaxTTL != 45*time.Second || s.Proxy.MaxInflight != 64 || len(s.Layered.Rules) != 2 {
		t.Fatalf("file values lost: %+v", s)
	}
	// A bad flag value names the flag.
	f, err = ParseFlags([]string{"--promotion-threshold", "0", "--l2", "nohost"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Load("", f)
	if err == nil || !strings.Contains(err.Error(), "--promotion-threshold: 0 is out of range") || !strings.Contains(err.Error(), "--l2: server \"nohost\"") {
		t.Fatalf("flag errors: %v", err)
	}
}

func TestDefaultFileChecksAndIsTheDefault(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"config", "default"}, &out, &errOut); code != 0 {
		t.Fatalf("config default: exit %d: %s", code, errOut.String())
	}
	path := writeFile(t, "default.toml", out.String())
	if code, stdout, stderr := checkConfig(t, path); code != 0 {
		t.Fatalf("config check of the default file: exit %d: %s %s", code, stdout, stderr)
	}
	fromFile, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	none, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(fromFile.Effective)
	b, _ := json.Marshal(none.Effective)
	if !bytes.Equal(a, b) {
		t.Fatalf("the default file differs from no file:\n%s\n%s", a, b)
	}
	// Every key of the schema is in the default file, set or commented.
	for _, key := range fileSchema.Keys() {
		leaf := key[strings.LastIndexByte(key, '.')+1:]
		if !strings.Contains(out.String(), leaf) {
			t.Errorf("the default file does not mention %s", key)
		}
	}
}
