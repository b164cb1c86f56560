package proxy

import (
	"strconv"

	"github.com/strata-cache/strata/proxy/protocol"
)

// Inspector is a tier that can show memcached's per-item views: me, and
// lru_crawler's crawl and metadump. The embedded store is one; a memcached
// pool is not (its items live in its servers, which answer these commands
// themselves). The proxy calls it on an event loop; each call must be
// bounded (the embedded store caps a dump at 2 MiB).
type Inspector interface {
	// AppendMetaDebug appends the whole reply to "me": the item's ME line
	// with printed as its key, or "EN\r\n".
	AppendMetaDebug(dst, printed, key []byte) []byte
	// AppendMetaDump appends one line per live item of the classes marked
	// (nil: every class), without the final END.
	AppendMetaDump(dst []byte, classes []bool) []byte
	// Crawl reclaims the expired items of the classes marked (nil: all).
	Crawl(classes []bool)
}

// WithInspector answers me and lru_crawler crawl|metadump from i (usually
// the tier of record). Without one, me answers EN and those two answer
// errNoInspector.
func WithInspector(i Inspector) Option {
	return func(o *options) { o.inspector = i }
}

// MemLimiter is a tier whose memory bound can change while it serves: the
// embedded store, whose SetMaxBytes evicts down to a smaller bound before
// it returns. cache_memlimit calls it on an event loop.
type MemLimiter interface {
	SetMaxBytes(n int64) error
}

// WithMemLimiter answers cache_memlimit by changing m's bound (usually the
// tier of record's, the memory stats report). Without one, over memcached
// pools whose servers have their own, it answers rNoMemlimit.
func WithMemLimiter(m MemLimiter) Option {
	return func(o *options) { o.memLimiter = m }
}

var (
	// rNoInspector: the tiers behind strata are memcached servers, which
	// answer these commands themselves; strata does not fan them out.
	rNoInspector = []byte("SERVER_ERROR not supported over memcached pools: send it to the servers\r\n")
	// rNoMemlimit: a tier's memory is fixed when strata starts.
	rNoMemlimit = []byte("SERVER_ERROR cache_memlimit not supported: set the tier's memory in the configuration and restart\r\n")
)

// appendMetaDebug answers me.
func (srv *Server) appendMetaDebug(dst []byte, cmd *protocol.Command) []byte {
	if srv.opts.inspector == nil || len(cmd.Args) < 2 {
		return append(dst, cmd.Reply...)
	}
	return srv.opts.inspector.AppendMetaDebug(dst, cmd.Args[0], cmd.Args[1])
}

// appendAdmin answers the administration commands the parser accepted
// (see protocol's parse_admin.go for the checks and the replies it gives
// alone).
func (srv *Server) appendAdmin(dst []byte, cmd *protocol.Command) []byte {
	a := cmd.Args
	switch string(a[0]) {
	case "cache_memlimit":
		reply := rNoMemlimit
		if m := srv.opts.memLimiter; m != nil {
			// The parser checked the megabytes: a number of at least 8.
			mb, _ := strconv.ParseInt(string(a[1]), 10, 64)
			reply = replyOK
			if err := m.SetMaxBytes(mb << 20); err != nil {
				reply = []byte("SERVER_ERROR " + err.Error() + "\r\n")
			}
		}
		if cmd.NoReply {
			return dst
		}
		return append(dst, reply...)
	case "slabs":
		// automove: strata's stores have no slab classes whose pages could
		// be moved; memory already follows the items, whatever their size.
		return append(dst, replyOK...)
	case "lru_crawler":
		switch string(a[1]) {
		case "enable", "disable":
			// Nothing to start or stop: items are reclaimed as they are
			// met, and on crawl.
			return append(dst, replyOK...)
		case "crawl", "metadump":
			var classes []bool
			all, ok := protocol.ParseSlabClasses(a[2], nil)
			if string(a[2]) == "hash" && string(a[1]) == "metadump" {
				all, ok = true, true
			}
			if !ok {
				return append(dst, rBadCmdFormat...)
			}
			if !all {
				classes = make([]bool, maxSlabClasses)
				protocol.ParseSlabClasses(a[2], classes)
			}
			in := srv.opts.inspector
			if in == nil {
				return append(dst, rNoInspector...)
			}
			if string(a[1]) == "crawl" {
				in.Crawl(classes)
				return append(dst, replyOK...)
			}
			dst = in.AppendMetaDump(dst, classes)
			return append(dst, rEnd...)
		}
	}
	return append(dst, "ERROR\r\n"...)
}
