package proxy

import (
	"net"
	"os"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/strata-cache/strata/proxy/protocol"
)

// The stats command and its sections, spelt as memcached 1.6.18 spells
// them, so that tools written for memcached (the Prometheus exporter,
// dashboards, scripts) read strata without knowing it.
//
//	stats              memcached's general fields from the data plane's
//	                   counters, then the tiers' (hook, section "")
//	stats settings     memcached's settings with strata's values, then the
//	                   tiers' (hook, section "settings": maxbytes, ...)
//	stats items|slabs  the hook: per slab class figures of the tier of
//	                   record when it is an embedded store
//	stats cachedump    checked here, answered by the hook
//	stats sizes        "sizes_status disabled", as a memcached without -o
//	                   track_sizes
//	stats conns        the listener and every client connection
//	stats detail       on|off|dump: per-prefix counters while on
//	                   (stats_detail.go)
//	stats reset        memcached's counters restart from zero in this
//	                   reply (not in /metrics, whose counters only grow);
//	                   the hook resets the tiers' own
//	stats sampler|tiers the hook
//
// Any other section answers ERROR, as memcached does.

// statsSections maps a section to whether the hook is asked for it.
var statsSections = map[string]bool{
	"settings": true, "items": true, "slabs": true, "cachedump": true,
	"sizes": false, "conns": false, "detail": false, "reset": true,
	"sampler": true, "tiers": true, "hotkeys": true,
}

var (
	rUsageDetail  = []byte("CLIENT_ERROR usage: stats detail on|off|dump\r\n")
	rBadCmdLine   = []byte("CLIENT_ERROR bad command line\r\n")
	rBadCmdFormat = []byte("CLIENT_ERROR bad command line format\r\n")
	rIllegalSlab  = []byte("CLIENT_ERROR Illegal slab id\r\n")
	rReset        = []byte("RESET\r\n")
	rEnd          = []byte("END\r\n")
)

// maxSlabClasses is memcached's MAX_NUMBER_OF_SLAB_CLASSES: a cachedump
// class id must be below it.
const maxSlabClasses = 64

// appendStats answers one stats command.
func (srv *Server) appendStats(dst []byte, args [][]byte) []byte {
	if len(args) == 0 {
		dst = srv.appendGeneralStats(dst)
		dst = srv.hook(dst, args)
		return append(dst, rEnd...)
	}
	section := string(args[0])
	askHook, known := statsSections[section]
	if !known {
		return append(dst, "ERROR\r\n"...)
	}
	switch section {
	case "settings":
		dst = srv.appendSettings(dst)
	case "sizes":
		dst = protocol.AppendStatString(dst, "sizes_status", "disabled")
	case "conns":
		dst = srv.appendConns(dst)
	case "detail":
		if len(args) < 2 {
			return append(dst, rUsageDetail...)
		}
		switch string(args[1]) {
		case "on":
			srv.detail.Store(true)
			return append(dst, replyOK...)
		case "off":
			srv.detail.Store(false)
			return append(dst, replyOK...)
		case "dump":
			dst = srv.detailStats.appendDump(dst)
			return append(dst, rEnd...)
		}
		return append(dst, rUsageDetail...)
	case "cachedump":
		if len(args) < 3 {
			return append(dst, rBadCmdLine...)
		}
		id, ok1 := strconv.ParseUint(string(args[1]), 10, 32)
		_, ok2 := strconv.ParseUint(string(args[2]), 10, 32)
		if ok1 != nil || ok2 != nil {
			return append(dst, rBadCmdFormat...)
		}
		if id >= maxSlabClasses {
			return append(dst, rIllegalSlab...)
		}
	case "reset":
		c := srv.Counters()
		srv.statsBase.Store(&c)
		srv.hook(dst, args) // the tiers reset theirs; the reply is memcached's
		return append(dst, rReset...)
	}
	if askHook {
		dst = srv.hook(dst, args)
	}
	return append(dst, rEnd...)
}

func (srv *Server) hook(dst []byte, args [][]byte) []byte {
	if srv.opts.statsFunc == nil {
		return dst
	}
	return srv.opts.statsFunc(dst, args)
}

// appendGeneralStats writes memcached's general fields that the data plane
// owns. Fields about memory and items come from the tiers (the hook).
func (srv *Server) appendGeneralStats(dst []byte) []byte {
	c := srv.Counters().since(srv.statsBase.Load())
	now := time.Now()
	u := func(name string, v uint64) { dst = protocol.AppendStatUint(dst, name, v) }
	u("pid", uint64(os.Getpid()))
	u("uptime", uint64(now.Sub(srv.started)/time.Second))
	u("time", uint64(now.Unix()))
	dst = protocol.AppendStatString(dst, "version", protocol.MemcachedVersion)
	u("pointer_size", strconv.IntSize)
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		dst = protocol.AppendStatString(dst, "rusage_user", timeval(ru.Utime))
		dst = protocol.AppendStatString(dst, "rusage_system", timeval(ru.Stime))
	}
	u("max_connections", srv.maxConns())
	u("curr_connections", uint64(max(c.ConnsCurrent, 0)))
	u("total_connections", c.ConnsTotal)
	u("rejected_connections", 0)
	u("connection_structures", uint64(max(c.ConnsCurrent, 0)))
	u("cmd_get", c.Gets)
	u("cmd_set", c.Sets)
	u("cmd_flush", c.Flushes)
	u("cmd_touch", c.Touches)
	u("cmd_meta", c.MetaCmds)
	u("get_hits", c.GetHits)
	u("get_misses", c.GetMisses)
	u("delete_misses", c.Deletes-c.DeleteHits)
	u("delete_hits", c.DeleteHits)
	u("incr_misses", c.IncrMisses)
	u("incr_hits", c.IncrHits)
	u("decr_misses", c.DecrMisses)
	u("decr_hits", c.DecrHits)
	u("cas_misses", c.CasMisses)
	u("cas_hits", c.CasHits)
	u("cas_badval", c.CasBadval)
	u("touch_hits", c.TouchHits)
	u("touch_misses", c.Touches-c.TouchHits)
	if srv.auth != nil {
		attempts, failures := srv.auth.Counts()
		u("auth_cmds", attempts)
		u("auth_errors", failures)
	}
	u("bytes_read", c.BytesRead)
	u("bytes_written", c.BytesWritten)
	accepting := uint64(1)
	if srv.draining.Load() {
		accepting = 0
	}
	u("accepting_conns", accepting)
	u("listen_disabled_num", 0)
	u("threads", uint64(srv.cfg.Loops))
	u("conn_yields", 0)
	dst = protocol.AppendStatString(dst, "strata_version", srv.cfg.Version)
	u("strata_l1_hits", c.L1Hits)
	u("strata_l2_hits", c.L2Hits)
	u("strata_stall_refused_writes", c.StallRefused)
	u("strata_promoted", c.Promoted)
	u("strata_tier_errors", c.Errors)
	if m := srv.merge; m != nil {
		u("strata_loop_merges", m.merges.Load())
		u("strata_loop_probes", m.probes.Load())
		merged := uint64(0)
		if m.merged.Load() {
			merged = 1
		}
		u("strata_loops_merged", merged)
	}
	return dst
}

// timeval spells a CPU time as memcached does: seconds.microseconds.
func timeval(tv syscall.Timeval) string {
	us := strconv.FormatInt(int64(tv.Usec), 10)
	for len(us) < 6 {
		us = "0" + us
	}
	return strconv.FormatInt(int64(tv.Sec), 10) + "." + us
}

// maxConns is the connection limit in force: strata sets none of its own,
// so it is the descriptor limit.
func (srv *Server) maxConns() uint64 {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) != nil {
		return 0
	}
	return rl.Cur
}

// appendSettings writes memcached's settings as strata has them. Those
// that describe memcached's memory layout (slab classes, LRU segments,
// crawler) carry memcached's defaults, which is how the embedded store
// reports its items (see the embedded package's stats). The tiers add
// maxbytes through the hook.
func (srv *Server) appendSettings(dst []byte) []byte {
	u := func(name string, v uint64) { dst = protocol.AppendStatUint(dst, name, v) }
	str := func(name, v string) { dst = protocol.AppendStatString(dst, name, v) }
	yesNo := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	host, port, _ := net.SplitHostPort(srv.Addr())
	p, _ := strconv.ParseUint(port, 10, 16)
	if host == "" {
		host = "NULL"
	}
	lim := srv.cfg.Limits
	u("maxconns", srv.maxConns())
	u("tcpport", p)
	u("udpport", 0)
	str("inter", host)
	u("verbosity", 0)
	u("oldest", 0)
	str("evictions", "on")
	str("domain_socket", "NULL")
	u("umask", 700)
	str("shutdown_command", "no")
	str("growth_factor", "1.25")
	u("chunk_size", 48)
	u("num_threads", uint64(srv.cfg.Loops))
	u("num_threads_per_udp", uint64(srv.cfg.Loops))
	str("stat_key_prefix", ":")
	str("detail_enabled", yesNo(srv.detail.Load()))
	u("reqs_per_event", 20)
	str("cas_enabled", "yes")
	u("tcp_backlog", 1024)
	str("binding_protocol", "auto-negotiate") // the first byte picks text or binary, as in memcached
	str("auth_enabled_sasl", yesNo(srv.auth != nil))
	str("auth_enabled_ascii", yesNo(srv.auth != nil))
	itemMax := lim.MaxItemSize
	if itemMax == 0 {
		itemMax = protocol.DefaultMaxItemSize
	}
	u("item_size_max", uint64(itemMax))
	str("maxconns_fast", "yes")
	u("hashpower_init", 0)
	str("slab_reassign", "no")
	u("slab_automove", 0)
	u("slab_chunk_max", uint64(itemMax/2))
	str("lru_crawler", "yes")
	u("lru_crawler_sleep", 100)
	u("lru_crawler_tocrawl", 0)
	u("tail_repair_time", 0)
	str("flush_enabled", yesNo(!lim.DisableFlush))
	str("dump_enabled", "yes")
	str("hash_algorithm", "xxh64")
	str("lru_maintainer_thread", "no")
	str("lru_segmented", "no")
	u("hot_lru_pct", 20)
	u("warm_lru_pct", 40)
	str("hot_max_factor", "0.20")
	str("warm_max_factor", "2.00")
	str("temp_lru", "no")
	u("temporary_ttl", 61)
	u("idle_timeout", 0)
	u("read_buf_mem_limit", 0)
	str("track_sizes", "no")
	str("inline_ascii_response", "no")
	str("ssl_enabled", "no")
	return dst
}

// connRow is what stats conns shows of a client connection.
type connRow struct {
	fd      int
	remote  string
	lastCmd int64
}

// addrString is a's text, empty for none.
func addrString(a net.Addr) string {
	if a == nil {
		return ""
	}
	return a.String()
}

// appendConns writes each client connection as memcached does, keyed by
// descriptor, in descriptor order. (memcached also lists its listening
// socket; gnet does not expose the listener's descriptor.)
func (srv *Server) appendConns(dst []byte) []byte {
	now := nanotime()
	listen := "tcp:" + srv.Addr()
	srv.mu.Lock()
	loops := append([]*loopState(nil), srv.loops...)
	srv.mu.Unlock()
	var all []connRow
	for _, l := range loops {
		l.connsMu.Lock()
		for cn := range l.conns {
			// Under connsMu, so before the loop's OnClose for cn, and
			// so before gnet lets go of the address (it does after OnClose).
			all = append(all, connRow{fd: int(cn.fd), remote: addrString(cn.c.RemoteAddr()), lastCmd: cn.lastCmd.Load()})
		}
		l.connsMu.Unlock()
	}
	slices.SortFunc(all, func(a, b connRow) int { return a.fd - b.fd })
	for _, ci := range all {
		id := strconv.Itoa(ci.fd) + ":"
		dst = protocol.AppendStatString(dst, id+"addr", "tcp:"+ci.remote)
		dst = protocol.AppendStatString(dst, id+"listen_addr", listen)
		dst = protocol.AppendStatString(dst, id+"state", "conn_parse_cmd")
		dst = protocol.AppendStatUint(dst, id+"secs_since_last_cmd", uint64(max(now-ci.lastCmd, 0)/int64(time.Second)))
	}
	return dst
}
