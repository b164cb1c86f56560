package main

import (
	"bytes"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	gm "github.com/grobie/gomemcache/memcache"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/poll"
)

// These tests read strata the way the Prometheus memcached exporter does,
// through the client library it is built on, and hold every section it
// parses to the rules the exporter applies: a key it reads must be there
// and parse as a number (or as its timeval or yes/no), or the exporter
// reports memcached_up 0. Where the figures have an oracle, a real
// memcached is given the same items and must show the same ones.

// exporterGeneralKeys are the keys of plain stats the exporter turns into
// metrics (rusage_* are timevals, handled apart).
var exporterGeneralKeys = []string{
	"uptime", "time", "cas_badval", "cmd_flush", "cmd_set", "cas_misses", "cas_hits",
	"get_hits", "get_misses", "delete_hits", "delete_misses", "incr_hits", "incr_misses",
	"decr_hits", "decr_misses", "touch_hits", "touch_misses",
	"bytes", "limit_maxbytes", "curr_items", "total_items", "bytes_read", "bytes_written",
	"curr_connections", "total_connections", "rejected_connections", "conn_yields",
	"listen_disabled_num", "evictions", "reclaimed", "store_too_large", "store_no_memory",
	"lru_crawler_starts", "direct_reclaims", "crawler_items_checked", "crawler_reclaimed",
	"moves_to_cold", "moves_to_warm", "moves_within_lru", "total_malloced", "accepting_conns",
}

// exporterItemKeys are the per-class keys of stats items it reads.
var exporterItemKeys = []string{
	"number", "age", "hits_to_hot", "hits_to_warm", "hits_to_cold", "hits_to_temp",
	"crawler_reclaimed", "evicted", "evicted_nonzero", "evicted_time", "evicted_unfetched",
	"expired_unfetched", "outofmemory", "reclaimed", "tailrepairs", "mem_requested",
	"moves_to_cold", "moves_to_warm", "moves_within_lru",
	"number_hot", "number_warm", "number_cold", "age_hot", "age_warm",
}

// exporterSlabKeys are the per-class keys of stats slabs it reads.
var exporterSlabKeys = []string{
	"get_hits", "delete_hits", "incr_hits", "decr_hits", "cas_hits", "touch_hits", "cas_badval",
	"cmd_set", "chunk_size", "chunks_per_page", "total_pages", "total_chunks", "used_chunks",
	"free_chunks", "free_chunks_end",
}

// exporterSettingKeys are the stats settings keys it reads when
// lru_crawler is "yes" (maxconns always).
var exporterSettingKeys = []string{
	"maxconns", "lru_crawler_sleep", "lru_crawler_tocrawl", "hot_lru_pct", "warm_lru_pct",
	"hot_max_factor", "warm_max_factor",
}

var timevalRE = regexp.MustCompile(`^[0-9]+\.[0-9]{6}$`)

func mustNumber(t *testing.T, where string, m map[string]string, key string) float64 {
	t.Helper()
	v, ok := m[key]
	if !ok {
		t.Errorf("%s: no %s", where, key)
		return 0
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Errorf("%s: %s = %q is not a number", where, key, v)
	}
	return f
}

// exporterScrape reads addr as the exporter does and checks every section; it
// returns what it read.
func exporterScrape(t *testing.T, addr string) (gm.Stats, map[string]string) {
	t.Helper()
	c, err := gm.New(addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Timeout = 5 * time.Second
	all, err := c.Stats()
	if err != nil {
		t.Fatalf("Stats (stats, stats slabs, stats items): %v", err)
	}
	settingsAll, err := c.StatsSettings()
	if err != nil {
		t.Fatalf("StatsSettings: %v", err)
	}
	if len(all) != 1 || len(settingsAll) != 1 {
		t.Fatalf("%d stats and %d settings replies for one server", len(all), len(settingsAll))
	}
	var st gm.Stats
	for _, v := range all {
		st = v
	}
	var settings map[string]string
	for _, v := range settingsAll {
		settings = v
	}
	if st.Stats["version"] != "1.6.18" {
		t.Errorf("version %q, want memcached's 1.6.18", st.Stats["version"])
	}
	for _, k := range exporterGeneralKeys {
		mustNumber(t, "stats", st.Stats, k)
	}
	for _, k := range []string{"rusage_user", "rusage_system"} {
		if !timevalRE.MatchString(st.Stats[k]) {
			t.Errorf("stats: %s = %q is not a timeval", k, st.Stats[k])
		}
	}
	for class, m := range st.Items {
		for _, k := range exporterItemKeys {
			mustNumber(t, fmt.Sprintf("items:%d", class), m, k)
		}
	}
	for class, m := range st.Slabs {
		for _, k := range exporterSlabKeys {
			mustNumber(t, fmt.Sprintf("slabs %d", class), m, k)
		}
	}
	if settings["lru_crawler"] != "yes" {
		t.Errorf("settings: lru_crawler = %q", settings["lru_crawler"])
	}
	for _, k := range exporterSettingKeys {
		mustNumber(t, "settings", settings, k)
	}
	for _, k := range []string{"lru_crawler", "lru_maintainer_thread"} {
		if v := settings[k]; v != "yes" && v != "no" {
			t.Errorf("settings: %s = %q, want yes or no", k, v)
		}
	}
	return st, settings
}

// loadSizes stores items of several sizes, so that they fall in several
// slab classes, and reads some of them.
func loadSizes(t *testing.T, addr string) {
	t.Helper()
	var req bytes.Buffer
	for i, size := range []int{1, 10, 100, 100, 500, 1000, 5000, 20000, 100000, 600000} {
		fmt.Fprintf(&req, "set key:%d %d 0 %d\r\n%s\r\n", i, i%2, size, strings.Repeat("v", size))
	}
	req.WriteString("get key:0 key:3 nope\r\nmn\r\nquit\r\n")
	out, err := memcachedtest.Exchange(addr, req.Bytes(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(out, bytes.Repeat([]byte("STORED\r\n"), 10)) {
		t.Fatalf("loading items: %.200q", out)
	}
}

// warmPool waits until strata stores through its pools (their connections
// are dialled as strata starts), then leaves no trace in the counters.
func warmPool(t *testing.T, addr string) {
	t.Helper()
	poll.Until(t, 10*time.Second, "a set through the pools", func() bool {
		out, err := memcachedtest.Exchange(addr, []byte("set warm 0 0 1\r\nx\r\nquit\r\n"), 5*time.Second)
		return err == nil && string(out) == "STORED\r\n"
	})
	if out, _ := memcachedtest.Exchange(addr, []byte("delete warm\r\nstats reset\r\nquit\r\n"), 5*time.Second); string(out) != "DELETED\r\nRESET\r\n" {
		t.Fatalf("after warming: %q", out)
	}
}

func TestExporterViewEmbedded(t *testing.T) {
	ta := startApp(t, "")
	addr := ta.proxy.Addr()
	ref := memcachedtest.Start(t).Addr
	loadSizes(t, addr)
	loadSizes(t, ref)

	st, settings := exporterScrape(t, addr)
	want, wantSettings := exporterScrape(t, ref)

	if got := st.Stats["curr_items"]; got != "10" {
		t.Errorf("curr_items %s, want 10", got)
	}
	if mustNumber(t, "stats", st.Stats, "get_hits") != 2 || mustNumber(t, "stats", st.Stats, "get_misses") != 1 {
		t.Errorf("get_hits %s get_misses %s, want 2 and 1", st.Stats["get_hits"], st.Stats["get_misses"])
	}
	if settings["item_size_max"] != wantSettings["item_size_max"] || settings["maxbytes"] != "1073741824" {
		t.Errorf("settings: item_size_max %s (memcached %s), maxbytes %s", settings["item_size_max"], wantSettings["item_size_max"], settings["maxbytes"])
	}
	// The same items fall in the same classes, with memcached's sizes.
	// (memcached's slabs also list the classes holding the chunks of an
	// item above slab_chunk_max; strata lists the classes of items.)
	if len(st.Items) != len(want.Items) || len(st.Slabs) != len(st.Items) {
		t.Fatalf("classes: items %d slabs %d, memcached items %d", len(st.Items), len(st.Slabs), len(want.Items))
	}
	for class, w := range want.Items {
		g := st.Items[class]
		for _, k := range []string{"number", "mem_requested"} {
			if g[k] != w[k] {
				t.Errorf("items:%d:%s = %q, memcached %q", class, k, g[k], w[k])
			}
		}
	}
	for class, g := range st.Slabs {
		w := want.Slabs[class]
		for _, k := range []string{"chunk_size", "chunks_per_page", "used_chunks", "total_pages"} {
			if g[k] != w[k] {
				t.Errorf("slabs %d:%s = %q, memcached %q", class, k, g[k], w[k])
			}
		}
	}

	// stats reset answers RESET and restarts the counters.
	c, _ := gm.New(addr)
	if err := c.StatsReset(); err != nil {
		t.Fatalf("StatsReset: %v", err)
	}
	after, _ := exporterScrape(t, addr)
	if after.Stats["get_hits"] != "0" || after.Stats["cmd_set"] != "0" || after.Stats["curr_items"] != "10" {
		t.Errorf("after stats reset: get_hits %s cmd_set %s curr_items %s", after.Stats["get_hits"], after.Stats["cmd_set"], after.Stats["curr_items"])
	}
}

func TestExporterViewOverPools(t *testing.T) {
	l1, l2 := memcachedtest.Start(t), memcachedtest.Start(t)
	ta := startApp(t, fmt.Sprintf("[l1]\nservers = [%q]\ntimeout = \"5s\"\n[l2]\nservers = [%q]\ntimeout = \"5s\"\n", l1.Addr, l2.Addr))
	addr := ta.proxy.Addr()
	warmPool(t, addr)
	ta.l2.pool.totals.Poll() // the servers hold nothing yet
	loadSizes(t, addr)
	st, _ := exporterScrape(t, addr)
	// A pool's items live in its servers: strata counts its own requests
	// and sums the L2 servers' item, memory and per-class figures, polled
	// at start and every 10s (these items arrived after the last poll,
	// which found none; poll again to see them at once).
	if len(st.Items) != 0 {
		t.Errorf("over pools before a poll: %d item classes", len(st.Items))
	}
	if st.Stats["cmd_set"] != "10" || st.Stats["get_hits"] != "2" || st.Stats["limit_maxbytes"] != "67108864" {
		t.Errorf("over pools: cmd_set %s get_hits %s limit_maxbytes %s", st.Stats["cmd_set"], st.Stats["get_hits"], st.Stats["limit_maxbytes"])
	}
	// Per-item views belong to the servers; strata says so.
	for _, cmd := range []string{"lru_crawler metadump all", "lru_crawler crawl all"} {
		if got := rawLines(t, addr, cmd); len(got) != 1 || got[0] != "SERVER_ERROR not supported over memcached pools: send it to the servers" {
			t.Errorf("%s over pools: %q", cmd, got)
		}
	}
	if got := rawLines(t, addr, "me key:0"); len(got) != 1 || got[0] != "EN" {
		t.Errorf("me over pools: %q", got)
	}
	ta.l2.pool.totals.Poll()
	st, _ = exporterScrape(t, addr)
	if st.Stats["curr_items"] != "10" {
		t.Errorf("over pools: curr_items %s, want the 10 items of the L2 server", st.Stats["curr_items"])
	}
	direct, _ := exporterScrape(t, l2.Addr)
	if len(st.Items) == 0 || len(st.Items) != len(direct.Items) || len(st.Slabs) != len(direct.Slabs) {
		t.Fatalf("over pools: %d item and %d slab classes, the L2 server %d and %d", len(st.Items), len(st.Slabs), len(direct.Items), len(direct.Slabs))
	}
	for class, w := range direct.Items {
		for _, k := range []string{"number", "mem_requested"} {
			if st.Items[class][k] != w[k] {
				t.Errorf("over pools: items:%d:%s = %q, the L2 server %q", class, k, st.Items[class][k], w[k])
			}
		}
	}
	for class, w := range direct.Slabs {
		for _, k := range []string{"chunk_size", "used_chunks", "total_pages"} {
			if st.Slabs[class][k] != w[k] {
				t.Errorf("over pools: slab %d:%s = %q, the L2 server %q", class, k, st.Slabs[class][k], w[k])
			}
		}
	}
}

// rawLines sends one command and returns its reply's lines up to and
// without the terminator.
func rawLines(t *testing.T, addr, cmd string) []string {
	t.Helper()
	out, err := memcachedtest.Exchange(addr, []byte(cmd+"\r\nmn\r\nquit\r\n"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSuffix(string(out), "MN\r\n")
	return strings.Split(strings.TrimSuffix(s, "\r\n"), "\r\n")
}

// The sections the exporter does not parse, in memcached's own words:
// the same bytes where the content can match, the same shape otherwise.
func TestStatsSectionsAsMemcached(t *testing.T) {
	ta := startApp(t, "")
	addr := ta.proxy.Addr()
	ref := memcachedtest.Start(t).Addr
	for _, a := range []string{addr, ref} {
		if _, err := memcachedtest.Exchange(a, []byte("set k 0 0 1\r\nx\r\nget k\r\nmn\r\nquit\r\n"), 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range []string{
		"stats sizes", "stats detail", "stats detail foo", "stats detail on", "stats detail dump",
		"stats detail off", "stats cachedump 1 0", "stats cachedump 1", "stats cachedump x 1",
		"stats cachedump 64 1", "stats cachedump 2 1", "stats nosuch", "stats reset",
		"version", "me nope", "slabs automove 1", "slabs automove 3", "slabs automove x",
		"slabs automove", "cache_memlimit 7", "cache_memlimit x", "lru_crawler", "lru_crawler sleep 2000000",
		"lru_crawler sleep 10", "lru_crawler tocrawl x", "lru_crawler tocrawl 0", "lru_crawler nosuch",
		"lru_crawler crawl all",
	} {
		got, want := rawLines(t, addr, cmd), rawLines(t, ref, cmd)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%q:\n strata    %q\n memcached %q", cmd, got, want)
		}
	}
	// Shapes: the figures differ between two servers.
	conns := rawLines(t, addr, "stats conns")
	connRE := regexp.MustCompile(`^STAT [0-9]+:(addr tcp:127\.0\.0\.1:[0-9]+|listen_addr tcp:` + regexp.QuoteMeta(addr) + `|state conn_[a-z_]+|secs_since_last_cmd [0-9]+)$`)
	if len(conns) < 5 || conns[len(conns)-1] != "END" {
		t.Fatalf("stats conns: %q", conns)
	}
	for _, l := range conns[:len(conns)-1] {
		if !connRE.MatchString(l) {
			t.Errorf("stats conns line %q", l)
		}
	}
	// me: the age (la) may differ by a clock tick between two servers.
	me := rawLines(t, addr, "me k")
	if len(me) != 1 || !regexp.MustCompile(`^ME k exp=-1 la=[0-9]+ cas=[0-9]+ fetch=yes cls=1 size=61$`).MatchString(me[0]) {
		t.Errorf("me k: %q", me)
	}
	meta := rawLines(t, addr, "lru_crawler metadump all")
	metaRE := regexp.MustCompile(`^key=k exp=-1 la=[0-9]+ cas=[0-9]+ fetch=yes cls=1 size=61$`)
	if len(meta) != 2 || !metaRE.MatchString(meta[0]) || meta[1] != "END" {
		t.Errorf("metadump: %q", meta)
	}
	// stats detail: the same per-prefix counts (memcached lists prefixes
	// in hash order, strata sorted).
	detail := "stats detail on\r\nset a:1 0 0 1\r\nx\r\nget a:1\r\nget a:2\r\nget b:1 a:1\r\nmg a:1 v\r\n" +
		"delete a:1\r\ntouch a:1 10\r\ngat 10 b:3\r\nincr a:9 1\r\nset zz 0 0 1\r\nx\r\nstats detail dump\r\nstats detail off\r\nquit\r\n"
	var dumps [2][]string
	for i, a := range []string{addr, ref} {
		out, err := memcachedtest.Exchange(a, []byte(detail), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(out), "\r\n") {
			if strings.HasPrefix(l, "PREFIX ") {
				dumps[i] = append(dumps[i], l)
			}
		}
		slices.Sort(dumps[i])
	}
	if len(dumps[0]) != 2 || !slices.Equal(dumps[0], dumps[1]) {
		t.Errorf("stats detail dump:\n strata    %q\n memcached %q", dumps[0], dumps[1])
	}
	// stats tiers: strata's per-tier lines, documented in docs/watching-and-tuning.md.
	tiersSection := strings.Join(rawLines(t, addr, "stats tiers"), "\n")
	for _, want := range []string{"STAT strata_l1_kind embedded", "STAT strata_l2_kind embedded", "STAT strata_l2_curr_items 2", "STAT strata_l1_limit_maxbytes 67108864"} {
		if !strings.Contains(tiersSection, want) {
			t.Errorf("stats tiers lacks %q:\n%s", want, tiersSection)
		}
	}
	// cache_memlimit changes the embedded L2's bound as memcached's own:
	// the same answer, and maxbytes follows.
	for _, a := range []string{addr, ref} {
		if got := rawLines(t, a, "cache_memlimit 100"); len(got) != 1 || got[0] != "OK" {
			t.Errorf("%s: cache_memlimit 100: %q", a, got)
		}
		if got := strings.Join(rawLines(t, a, "stats settings"), "\n"); !strings.Contains(got, "STAT maxbytes 104857600") {
			t.Errorf("%s: stats settings after cache_memlimit 100 lacks maxbytes 104857600:\n%s", a, got)
		}
	}
	if _, err := net.Dial("tcp", addr); err != nil {
		t.Fatal(err)
	}
}
