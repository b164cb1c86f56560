package conformance

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
)

// The tests in this file check the harness itself: a comparison that masks
// too much, or a reader that stops early, would let every server pass.

func TestSameReply(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		same bool
	}{
		{"identical", "STORED\r\n", "STORED\r\n", true},
		{"different status", "STORED\r\n", "NOT_STORED\r\n", false},
		{"extra reply", "END\r\n", "END\r\nEND\r\n", false},
		{"gets cas masked", "VALUE k 0 1 5\r\nA\r\nEND\r\n", "VALUE k 0 1 987654\r\nA\r\nEND\r\n", true},
		{"gets cas zero is not masked", "VALUE k 0 1 0\r\nA\r\nEND\r\n", "VALUE k 0 1 7\r\nA\r\nEND\r\n", false},
		{"get flags are not masked", "VALUE k 1 1\r\nA\r\nEND\r\n", "VALUE k 2 1\r\nA\r\nEND\r\n", false},
		{"data differs", "VALUE k 0 1\r\nA\r\nEND\r\n", "VALUE k 0 1\r\nB\r\nEND\r\n", false},
		{"meta cas masked", "HD c12 kfoo\r\n", "HD c99999 kfoo\r\n", true},
		{"meta cas zero is not masked", "EX c0\r\n", "EX c5\r\n", false},
		{"version masked", "VERSION 1.6.18\r\n", "VERSION strata-0.1\r\n", true},
		{"ttl within slack", "HD t1000\r\n", "HD t998\r\n", true},
		{"ttl beyond slack", "HD t1000\r\n", "HD t997\r\n", false},
		{"ttl infinite is exact", "HD t-1\r\n", "HD t0\r\n", false},
		{"last access within slack", "VA 1 l0 h1\r\nA\r\n", "VA 1 l1 h1\r\nA\r\n", true},
		{"hit flag exact", "HD h0\r\n", "HD h1\r\n", false},
		{"data looking like flags is not masked", "VA 4\r\nc123\r\n", "VA 4\r\nc999\r\n", false},
		{"data looking like a ttl is not masked", "VALUE k 0 2\r\nt5\r\nEND\r\n", "VALUE k 0 2\r\nt6\r\nEND\r\n", false},
		{"opaque is not masked", "HD Oc1\r\n", "HD Oc2\r\n", false},
		{"key is not masked", "HD kc1\r\n", "HD kc2\r\n", false},
		{"va length is not a flag", "VA 2 s2\r\nAB\r\n", "VA 3 s2\r\nABC\r\n", false},
		{"missing crlf", "STORED\r\n", "STORED\n", false},
		{"partial unit kept", "VALUE k 0 5\r\nAB", "VALUE k 0 5\r\nAC", false},
	}
	for _, tt := range tests {
		if got := sameReply([]byte(tt.a), []byte(tt.b)); got != tt.same {
			t.Errorf("%s: sameReply(%q, %q) = %v, want %v", tt.name, tt.a, tt.b, got, tt.same)
		}
	}
}

func TestNormalizeCapturesCAS(t *testing.T) {
	n := normalize([]byte("VALUE k 0 1 41\r\nA\r\nEND\r\nHD c42 t5\r\nNS c0\r\nVA 1 c43\r\nB\r\n"))
	if len(n.cas) != 3 || n.cas[0] != 41 || n.cas[1] != 42 || n.cas[2] != 43 {
		t.Errorf("captured CAS %v, want [41 42 43]", n.cas)
	}
}

func TestReadReplyCountsOnlyLines(t *testing.T) {
	// A value of "MN\r\n" must not be taken for the sentinel, however the
	// bytes are split across reads.
	reply := "VA 4\r\nMN\r\n\r\nMN\r\nMN\r\n"
	for _, split := range []int{1, 3, 6, len(reply)} {
		server, clientSide := net.Pipe()
		go func() {
			defer server.Close()
			for s := reply; len(s) > 0; {
				n := min(split, len(s))
				if _, err := server.Write([]byte(s[:n])); err != nil {
					return
				}
				s = s[n:]
			}
		}()
		got, err := readReply(clientSide, 2, time.Now().Add(5*time.Second))
		clientSide.Close()
		if err != nil || string(got) != reply {
			t.Errorf("split %d: readReply = %q, %v; want %q", split, got, err, reply)
		}
	}
}

func TestReadReplyReportsShortReply(t *testing.T) {
	server, clientSide := net.Pipe()
	go func() {
		_, _ = server.Write([]byte("STORED\r\n"))
		server.Close()
	}()
	got, err := readReply(clientSide, 1, time.Now().Add(5*time.Second))
	if err == nil {
		t.Errorf("readReply = %q with no MN and a closed peer; want an error", got)
	}
}

func TestCountNoops(t *testing.T) {
	if n := countNoops([]byte("mn\r\nmg a v\r\n  mn\r\nmn x\nms a 2\r\nmnop\r\n")); n != 3 {
		t.Errorf("countNoops = %d, want 3", n)
	}
}

func TestExpand(t *testing.T) {
	env := &expandEnv{prefix: "t0001", cas: []uint64{10, 20, 30}, now: 1_700_000_000}
	src := `$k:a\r\n${key 8}|${rep 3 ab}|${b64 $k\x00}|${cas}|${cas 1}|${cas -2}|${cas+1}|${now -5}|\x41\s\$\\\t\0`
	want := "t0001:a\r\nt0001xxx|ababab|dDAwMDEA|30|10|20|31|1699999995|A $\\\t\x00"
	got, err := env.expand(src)
	if err != nil || string(got) != want {
		t.Errorf("expand = %q, %v\nwant     %q", got, err, want)
	}
	for _, bad := range []string{`${cas 4}`, `${bogus}`, `$x`, `\q`, `${key 2}`, `${rep x a}`, `${unclosed`, `\x4`, `trailing\`} {
		if _, err := env.expand(bad); err == nil {
			t.Errorf("expand(%q) succeeded, want an error", bad)
		}
	}
	if _, err := (&expandEnv{prefix: "p"}).expand(`${cas}`); err == nil {
		t.Errorf("${cas} with nothing captured succeeded")
	}
}

func TestParseCasesRejectsBadFiles(t *testing.T) {
	bad := map[string]string{
		"directive before case": "send get a\\r\\n\n",
		"duplicate case":        "case a\nsend x\\r\\n\ncase a\nsend y\\r\\n\n",
		"more without send":     "case a\nmore x\n",
		"unknown directive":     "case a\nsned x\n",
		"case without send":     "case a\nclose\n",
		"bad template":          "case a\nsend ${nope}\n",
		"bad chunk":             "case a\nchunk 0\nsend x\\r\\n\n",
		"name with spaces":      "case a b\nsend x\\r\\n\n",
	}
	dir := t.TempDir()
	for name, text := range bad {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".txt")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := parseCases(path); err == nil {
			t.Errorf("%s: parseCases accepted %q", name, text)
		}
	}
}

func TestTableShape(t *testing.T) {
	cases, err := parseCases(filepath.Join("testdata", "exchanges.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 300 {
		t.Errorf("the table has %d cases; it is meant to cover every command, flag and error (300+)", len(cases))
	}
	// Every command family must appear in some step.
	all := ""
	for _, c := range cases {
		for _, s := range c.steps {
			all += "\n" + strings.ReplaceAll(s.src, `\r\n`, "\n")
		}
	}
	for _, verb := range []string{"get", "gets", "gat", "gats", "bget", "set", "add", "replace", "append", "prepend",
		"cas", "delete", "incr", "decr", "touch", "flush_all", "version", "verbosity", "quit", "mg", "ms", "md", "ma", "mn"} {
		if !strings.Contains(all, "\n"+verb+" ") && !strings.Contains(all, "\n"+verb+"\n") {
			t.Errorf("no step starts with %q", verb)
		}
	}
}

// TestDifferentialDetectsDifferences aims the differential harness at
// memcached instances configured to behave differently from the reference,
// and demands that it notices.
func TestDifferentialDetectsDifferences(t *testing.T) {
	cases, err := parseCases(filepath.Join("testdata", "exchanges.txt"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*testCase{}
	for _, c := range cases {
		byName[c.name] = c
	}
	ref := memcachedtest.Start(t).Addr
	bigItems := memcachedtest.Start(t, "-I", "2m").Addr // accepts values over 1 MiB
	noCAS := memcachedtest.Start(t, "-C").Addr          // every CAS unique is 0
	noFlush := memcachedtest.Start(t, "-F").Addr        // refuses flush_all
	now := time.Now().Unix()
	for i, tt := range []struct {
		sut, name string
		differ    bool
	}{
		{bigItems, "set-basic", false},
		{bigItems, "set-value-just-over-1mib-refused", true},
		{noCAS, "gets-multi", true},
		{noCAS, "cas-match", true},
		{noCAS, "ms-return-cas-key-opaque", true},
		{noFlush, "flush-all", true},
		{noFlush, "mg-vivify-on-miss", false},
	} {
		c := byName[tt.name]
		if c == nil {
			t.Fatalf("no case %q in the table", tt.name)
		}
		_, diff, err := diffCase(ref, tt.sut, c, "self"+string(rune('a'+i)), now)
		if err != nil {
			t.Fatal(err)
		}
		if (diff != "") != tt.differ {
			t.Errorf("case %s: difference found = %v, want %v\n%s", tt.name, diff != "", tt.differ, diff)
		}
	}
}
