package protocol

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// runParser feeds data to a Parser as one buffer (or one byte at a time),
// answers every Command from store, and returns the reply stream, whether
// the parser closed the connection, and the bytes it left unconsumed.
func runParser(t testing.TB, lim Limits, data []byte, byteWise bool, store *testStore) (out []byte, closed bool, rest []byte) {
	t.Helper()
	p := NewParser(lim)
	var cmd Command
	var pending []byte
	// flushed is how much of out memcached has written for sure: it
	// writes its pending replies after each get-family command and mn.
	flushed := 0
	feed := func(b []byte) bool {
		pending = append(pending, b...)
		for {
			n, err := p.Parse(pending, &cmd)
			if n > len(pending) {
				t.Fatalf("Parse consumed %d of %d bytes", n, len(pending))
			}
			if err != nil {
				if !errors.Is(err, ErrClose) {
					t.Fatalf("Parse error %v is not ErrClose", err)
				}
				if cmd.Op != OpQuit {
					// memcached closes at once, dropping the replies it
					// has not written yet.
					out = out[:flushed]
				}
				out = append(out, cmd.Reply...)
				return true
			}
			if n == 0 {
				return false
			}
			pending = pending[n:]
			out = answer(out, &cmd, store)
			switch cmd.Op {
			case OpGet, OpGets, OpGat, OpGats, OpMetaNoop:
				flushed = len(out)
			}
		}
	}
	if !byteWise {
		return out, feed(data), pending
	}
	for i := range data {
		if feed(data[i : i+1]) {
			return out, true, pending
		}
	}
	return out, false, pending
}

// answer plays the proxy: the store answers data commands, and version
// and stats are answered as memcached 1.6.18 would for the cases used.
func answer(out []byte, cmd *Command, store *testStore) []byte {
	switch cmd.Op {
	case OpVersion:
		return AppendVersion(out, "1.6.18")
	case OpStats:
		return AppendError(out)
	case OpAdmin:
		// The commands the cases below send are the ones memcached accepts
		// with OK, and refresh_certs, which a memcached without TLS refuses
		// even with noreply (as the proxy does without TLS); strata's own
		// answers are tested in the proxy.
		if string(cmd.Args[0]) == "refresh_certs" {
			return append(out, "Error TLS not enabled\r\n"...)
		}
		if cmd.NoReply {
			return out
		}
		return append(out, "OK\r\n"...)
	}
	return cmd.AppendReply(out, store.do(cmd.Reqs))
}

type diffCase struct {
	name string
	in   string
	// long: the outcome depends on how the bytes arrive (lines over 2048
	// bytes), so only the one-buffer run is meaningful.
	long bool
}

// diffCases are compared byte for byte with memcached, CAS uniques
// renumbered (see diffRun). Replies that come from the store are the
// embedded tier's; every reply the parser decides alone (errors,
// swallowing, noreply) is the codec's own.
var diffCases = []diffCase{
	// storage and retrieval
	{"set get", "set k 5 0 3\r\nabc\r\nget k\r\n", false},
	{"gets cas", "set k 0 0 1\r\na\r\ngets k\r\n", false},
	{"multi get", "set a 1 0 1\r\n1\r\nset b 2 0 2\r\n22\r\nget a x b a\r\n", false},
	{"bget", "set a 0 0 1\r\n1\r\nbget a\r\n", false},
	{"add replace", "add k 0 0 1\r\na\r\nadd k 0 0 1\r\nb\r\nreplace k 0 0 1\r\nc\r\nreplace nx 0 0 1\r\nd\r\nget k\r\n", false},
	{"append prepend", "append k 0 0 1\r\na\r\nset k 0 0 1\r\nb\r\nappend k 0 0 1\r\nc\r\nprepend k 0 0 1\r\na\r\nget k\r\n", false},
	{"cas", "set k 0 0 1\r\na\r\ncas k 0 0 1 99999\r\nb\r\ncas nx 0 0 1 5\r\nb\r\ngets k\r\n", false},
	{"cas match", "set k 0 0 1\r\na\r\ngets k\r\n", false},
	{"delete", "set k 0 0 1\r\na\r\ndelete k\r\ndelete k\r\ndelete k 0\r\ndelete k noreply\r\ndelete k 0 noreply\r\nmn\r\n", false},
	{"delete usage", "delete k 5\r\ndelete k x y\r\ndelete k 5 noreply\r\ndelete k 0 x\r\nmn\r\n", false},
	{"incr decr", "set n 0 0 2\r\n10\r\nincr n 5\r\ndecr n 100\r\nget n\r\nincr n 18446744073709551615\r\nincr x 1\r\n", false},
	{"decr pads", "set n 0 0 3\r\n100\r\ndecr n 91\r\nget n\r\nincr n 1\r\n", false},
	{"incr wrap", "set n 0 0 20\r\n18446744073709551615\r\nincr n 2\r\n", false},
	{"incr nonnumeric", "set n 0 0 1\r\nx\r\nincr n 1\r\n", false},
	{"incr bad delta", "incr n -1\r\nincr n abc\r\nincr n 18446744073709551616\r\nincr n +5\r\ndecr n -0\r\nincr n \t5\r\n", false},
	{"incr noreply", "set n 0 0 1\r\n1\r\nincr n 1 noreply\r\nincr n noreply\r\ndecr n 1 foo\r\nmn\r\n", false},
	{"touch", "set k 0 0 1\r\na\r\ntouch k 100\r\ntouch nx 100\r\ntouch k abc\r\ntouch k noreply\r\ntouch k 1 noreply\r\nmn\r\n", false},
	{"gat", "set k 0 0 1\r\na\r\ngat 100 k nx\r\ngats 0 k\r\ngat abc k\r\ngat 10\r\ngat -1 k\r\nget k\r\n", false},
	{"gat huge exptime", "gat 9999999999999999999 k\r\ngat 99999999999 k\r\n", false},
	{"flush_all", "set k 0 0 1\r\na\r\nflush_all\r\nget k\r\nflush_all 0\r\nflush_all noreply\r\nflush_all 0 noreply\r\nmn\r\n", false},
	{"flush_all odd", "flush_all 10 20\r\nflush_all noreply 5\r\nflush_all abc\r\nflush_all abc noreply\r\nflush_all -5\r\nflush_all 1 2 3\r\nmn\r\n", false},
	{"verbosity", "verbosity\r\nverbosity 1\r\nverbosity x\r\nverbosity noreply\r\nverbosity 1 noreply\r\nverbosity 1 2\r\nverbosity 0 1 2\r\nmn\r\n", false},
	{"mn me", "mn\r\nmn x y\r\nme\r\nme k\r\nme Zm9 b\r\nme Zm9v b\r\n", false},

	// noreply
	{"set noreply", "set k 0 0 1 noreply\r\na\r\nget k\r\n", false},
	{"set not noreply", "set k 0 0 1 foo\r\na\r\nget k\r\n", false},
	{"set noreply errors", "set k 0 0 noreply\r\nab\r\nset k x 0 1 noreply\r\nset k 0 0 1 noreply\r\nabc\r\nmn\r\n", false},
	{"cas noreply", "cas k 0 0 1 noreply\r\na\r\ncas k 0 0 1 5 noreply\r\na\r\nmn\r\n", false},

	// command line format
	{"unknown", "foo\r\nfoo bar\r\nx\r\n\r\n\n\r\n \r\n   \r\nGET\r\ngetx k\r\nsetx\r\nm\r\nmx\r\nmgx k\r\n", false},
	{"too few tokens", "get\r\nget \r\nset k 0 0\r\nset k 0 0 1 a b\r\ncas k 0 0 1\r\nincr k\r\ndelete\r\ntouch k\r\nverbosity 1 2 3\r\nflush_all 1 2 3 4\r\n", false},
	{"bad numbers", "set k x 0 1\r\nset k 0 x 1\r\nset k 0 0 x\r\nset k -1 0 1\r\nset k 0 0 -1\r\nset k 0 0 1x\r\ncas k 0 0 1 x\r\nmn\r\n", false},
	{"number quirks", "set k 4294967296 0 1\r\na\r\nset j -9223372036854775809 0 1\r\nb\r\nset i +5 0 1\r\nc\r\nset h 1\t9 0 1\r\nd\r\nget k j i h\r\n", false},
	{"vlen truncation", "set k 0 0 4294967298\r\nab\r\nget k\r\nset k 0 0 2147483648\r\nmn\r\n", false},
	{"vlen overflow", "set k 0 0 9223372036854775808\r\nset k 0 0 2147483647\r\nset k 0 0 2147483646\r\nmn\r\n", false},
	{"trailing spaces", "set k 0 0 1   \r\na\r\nget k  \r\n  get   k  \r\ndelete k   \r\n", false},
	{"lf only", "set k 0 0 1\na\r\nget k\nmn\n", false},
	{"cr in token", "set k 0 0 1\r\r\na\r\nget k\r\r\nget k\r\n", false},
	{"control chars in key", "set a\x01\tb 0 0 1\r\nz\r\nget a\x01\tb\r\nget a\x01\r\n", false},
	{"nul ends line", "set a 0 0 1\r\n1\r\nget a\x00 b\r\nset k\x00 x 0 0 1\r\nz\r\n", false},
	{"key 250", "set " + strings.Repeat("k", 250) + " 0 0 1\r\na\r\nget " + strings.Repeat("k", 250) + "\r\n", false},
	// memcached drops the unsent replies of earlier requests when a get
	// has a key over 250 bytes, so that get comes first here.
	{"key 251", "get a " + strings.Repeat("k", 251) + "\r\nset " + strings.Repeat("k", 251) + " 0 0 1\r\na\r\nincr " + strings.Repeat("k", 251) + " 1\r\ndelete " + strings.Repeat("k", 251) + "\r\ntouch " + strings.Repeat("k", 251) + " 1\r\n", false},
	{"key 251 noreply", "set " + strings.Repeat("k", 251) + " 0 0 1 noreply\r\na\r\nmn\r\n", false},
	{"many keys", "set k1 0 0 1\r\na\r\nget " + strings.Repeat("k1 ", 40) + "k1\r\n", false},
	{"many keys gat", "set k3 0 0 1\r\na\r\ngat 0 " + strings.Repeat("x ", 21) + "k3 k3\r\n", false},
	{"25 tokens set", "set k 0 0 1" + strings.Repeat(" x", 20) + "\r\nmn\r\n", false},
	{"get long key after 23", "get " + strings.Repeat("a ", 30) + strings.Repeat("z", 251) + "\r\n", false},
	{"version quit", "version\r\nversion x\r\nquit x\r\nget k\r\n", false},
	{"stats error", "stats foo bar\r\nmn\r\n", false},
	{"shutdown", "shutdown\r\nshutdown graceful\r\n", false},
	{"admin", "slabs\r\nlru\r\nlru x\r\nextstore\r\nmisbehave\r\ndebugtime\r\nrefresh_certs noreply\r\n", false},
	{"admin arguments", "cache_memlimit\r\ncache_memlimit x\r\ncache_memlimit 7\r\ncache_memlimit 0 noreply\r\n" +
		"cache_memlimit 64\r\ncache_memlimit 64 noreply\r\ncache_memlimit 1 2 3\r\n" +
		"slabs automove\r\nslabs automove x\r\nslabs automove 3\r\nslabs automove 1\r\nslabs automove 1 2\r\nslabs foo\r\n" +
		"slabs reassign 1 1\r\nslabs reassign x 1\r\nslabs reassign 1\r\n" +
		"lru_crawler\r\nlru_crawler sleep\r\nlru_crawler sleep x\r\nlru_crawler sleep 2000000\r\nlru_crawler sleep 100\r\n" +
		"lru_crawler tocrawl x\r\nlru_crawler tocrawl 0\r\nlru_crawler foo\r\nlru_crawler crawl\r\nlru_crawler metadump\r\n" +
		"lru_crawler crawl all\r\nmn\r\n", false},
	{"admin http", "extstore HTTP/1.1\r\nlru_crawler HTTP/1.1\r\nwatch HTTP/1.1\r\nrefresh_certs HTTP/1.1\r\nmisbehave HTTP/1.1\r\n", false},

	// data blocks
	{"bad data chunk", "set k 0 0 1\r\nabc\r\nget k\r\n", false},
	{"bad data chunk lf", "set k 0 0 1\r\na\nget k\r\n", false},
	{"bad data chunk short", "set k 0 0 3\r\na\r\nbc\r\nget k\r\n", false},
	{"data with crlf inside", "set k 0 0 4\r\n\r\n\r\n\r\nget k\r\n", false},
	{"empty value", "set k 0 0 0\r\n\r\nget k\r\n", false},
	{"too large", "set k 0 0 1048517\r\n" + strings.Repeat("a", 1048517) + "\r\nget k\r\n", false},
	{"largest", "set k 0 0 1048516\r\n" + strings.Repeat("a", 1048516) + "\r\nmn\r\n", false},
	{"largest flags", "set k 1 0 1048512\r\n" + strings.Repeat("a", 1048512) + "\r\nset k 1 0 1048513\r\n" + strings.Repeat("a", 1048513) + "\r\nmn\r\n", false},
	{"too large noreply", "set k 0 0 2000000 noreply\r\n" + strings.Repeat("a", 2000000) + "\r\nmn\r\n", false},
	{"too large swallows", "set k 0 0 1048600\r\n" + strings.Repeat("a", 1048600) + "get x\r\nmn\r\n", false},

	// meta get
	{"mg flags", "set k 7 0 2\r\nhi\r\nmg k s v t f k O123 q\r\nmg k\r\nmg k v\r\nmg nx s v t f k Oab\r\nmg nx q k\r\nmn\r\n", false},
	{"mg cas", "set k 0 0 1\r\na\r\nmg k c v\r\nmg k h\r\nmg k h u\r\n", false},
	{"mg hit count", "set k 0 0 1\r\na\r\nmg k h u\r\nmg k h\r\nmg k h\r\n", false},
	{"mg touch", "set k 0 0 1\r\na\r\nmg k T-1 v\r\nmg k v\r\n", false},
	{"mg vivify", "mg k N30 v\r\nmg k s\r\n", false},
	{"mg errors", "mg\r\nmg k T\r\nmg k Tx\r\nmg k T1x\r\nmg k T1\t9\r\nmg k F\r\nmg k Fx Tx\r\nmg k Tx Fx\r\nmg k Tx b\r\nmg k s s\r\nmg k sfoo\r\n", false},
	{"mg flag bytes", "mg k \x7f\r\nmg k \xc3\r\nmg k \x01\r\nmg k MEE\r\nmg k ME\r\nmg k E\r\nmg k Jx\r\nmg k Dx\r\nmg k N\r\nmg k R\r\nmg k Rx\r\nmg k C\r\nmg k Cx\r\n", false},
	{"mg accepts all", "mg k P L I M+ J1 D1 C1 F1 u\r\n", false},
	{"mg too many", "mg a s v t c f l h k O1 q u N1 R2 T4 b I M F J D\r\nmg a s v t c f h k O1 q u N1 R2 T4 I M F\r\nmg a s v t c f h k O1 q u N1 R2 T4 I M\r\n", false},
	{"mg invalid before dup", "mg a b c d e f g h i j k l m n o p q r\r\nmg k v v x\r\nmg k x v v\r\n", false},
	{"mg opaque", "set k 0 0 1\r\na\r\nmg k O1234567890123456789012345678901\r\nmg k O12345678901234567890123456789012\r\nmg nx O12345678901234567890123456789012\r\nmg nx q O12345678901234567890123456789012\r\n", false},
	{"mg key 251", "mg " + strings.Repeat("k", 251) + " v\r\nmg " + strings.Repeat("k", 250) + " v\r\n", false},

	// base64 keys
	{"base64 keys", "ms Zm9v 3 b k c O1\r\nbar\r\nmg Zm9v b k v\r\nmg foo v\r\nmd Zm9v b k q\r\nmg foo v\r\n", false},
	{"base64 lenient", "mg Zm9v= b k\r\nmg Z!m9v b k\r\nmg Zm9 b\r\nmg Zm9vYQ b k\r\nmg Zm9vYQ== b k\r\nmg Zm9vYQ==junk b k\r\nmg ==== b\r\nmg A=AA b k\r\nmg AA== b k\r\nmg A=== b\r\n", false},
	{"base64 ma md", "ma Zm9v b k\r\nma Zm9 b\r\nmd Zm9 b\r\nmd Zm9v b k\r\n", false},

	// meta set
	{"ms basic", "ms k 2\r\nhi\r\nmg k v\r\nms k 2 T0 F5 k O9\r\nho\r\nmg k v f\r\n", false},
	{"ms cas", "ms k 2 c\r\nhi\r\nms k 2 C1 c\r\nho\r\nms nx 2 C1\r\nho\r\n", false},
	{"ms modes", "ms k 1 ME\r\na\r\nms k 1 ME\r\nb\r\nms k 1 MA\r\nc\r\nms k 1 MP\r\nd\r\nms nx 1 MR\r\ne\r\nms k 1 MR\r\nf\r\nms k 1 MS\r\ng\r\nms nx 1 MA\r\nh\r\nmg k v\r\n", false},
	{"ms quiet", "ms k 1 q\r\na\r\nms k 1 q ME\r\nb\r\nms k 1 q\r\nabc\r\nmn\r\n", false},
	{"ms errors", "ms k\r\nms\r\nms k x\r\nhi\r\nms k -1\r\nms k 2 MX\r\nhi\r\nms k 2 Fx\r\nhi\r\nms k 2 Tx O123456789012345678901234567890123\r\nhi\r\nms k 2 O12345678901234567890123456789012\r\nhi\r\nms k 2 O12345678901234567890123456789012 MX\r\nhi\r\nmn\r\n", false},
	{"ms flag errors", "ms k 2 x\r\nhi\r\nms k 2 v v\r\nhi\r\nms k 2 MEE\r\nhi\r\nms k 2 Cx\r\nhi\r\nms k 2 b\r\nhi\r\nmn\r\n", false},
	{"ms too many", "ms k 2 c f h k O1 q u N1 R2 T4 I ME F J D s\r\nhi\r\nms k 2 c f h k O1 q u N1 R2 T4 I ME F J D\r\nhi\r\nmn\r\n", false},
	{"ms key 251", "ms " + strings.Repeat("k", 251) + " 2\r\nhi\r\nmn\r\n", false},
	{"ms bad chunk", "ms k 1\r\nabc\r\nmg k v\r\n", false},
	{"ms too large", "ms k 2000000 q\r\n" + strings.Repeat("a", 2000000) + "\r\nmn\r\n", false},
	{"ms largest", "ms kk 1048511 F1\r\n" + strings.Repeat("a", 1048511) + "\r\nms kk 1048512 F1\r\n" + strings.Repeat("a", 1048512) + "\r\nmn\r\n", false},
	{"ms invalid", "ms k 2 I\r\nhi\r\nms k 2 S5\r\nhi\r\nmn\r\n", false},

	// meta delete and arithmetic
	{"md", "set k 0 0 1\r\na\r\nmd k\r\nmd k\r\nmd k q\r\nmd nx q k O5\r\nmn\r\n", false},
	{"md cas", "set k 0 0 1\r\na\r\nmd k C1 k O1\r\nmd k q\r\nmn\r\n", false},
	{"md errors", "md\r\nmd k x\r\nmd k q q\r\nmd k Tx\r\nmd k O12345678901234567890123456789012\r\nmd k a b c d e f g h i j k l m n o p q r\r\n", false},
	{"ma", "set n 0 0 1\r\n5\r\nma n\r\nma n v\r\nma n MD D2 v t\r\nma n q\r\nma n q v\r\nma nx\r\nma nx q O1 k\r\nma n M- v\r\nma n M+ D10 v\r\nmn\r\n", false},
	{"ma vivify", "ma n N0 J13 v\r\nma n v\r\n", false},
	{"ma nonnumeric", "set n 0 0 1\r\nx\r\nma n\r\nma n q\r\n", false},
	{"ma errors", "ma\r\nma n MX\r\nma n Dx\r\nma n Jx\r\nma n MEE\r\nma n v v\r\nma n x\r\nma n C\r\n", false},
	{"ma cas", "set n 0 0 1\r\n5\r\nma n C1 v\r\nma n C1 q\r\nmn\r\n", false},

	// assorted
	{"ms bad base64", "ms Zm9 2 b\r\nhi\r\nms Zm9v 2 b\r\nhi\r\nmg foo v\r\nmn\r\n", false},
	{"mg opaque alone", "set k 0 0 1\r\na\r\nmg k v O k\r\nmg nx O k\r\n", false},
	{"ma flags", "set n 0 0 1\r\n5\r\nma n t c v k O7\r\nma n T0 N0 J3\r\nmg n v t\r\n", false},
	{"meta tabs", "set k 0 0 1\r\na\r\nmg k\tv\r\nmg k v\t\r\nmg k T1\t\r\nms k 1\tc\r\nb\r\n", false},
	{"meta F sign", "ms k 1 F-1\r\na\r\nms k 1 F+4\r\na\r\nms k 1 F4294967297\r\na\r\nmg k f v\r\n", false},
	{"get rest spaces", "set k 0 0 1\r\na\r\nget " + strings.Repeat("k ", 22) + "    \r\nget " + strings.Repeat("x  ", 30) + "k\r\n", false},
	{"get noreply key", "set noreply 0 0 1\r\na\r\nget k noreply\r\n", false},
	{"delete 0 0", "delete k 0 0\r\ndelete k noreply noreply\r\nmn\r\n", false},
	{"touch extra", "set k 0 0 1\r\na\r\ntouch k 10 foo\r\n", false},
	{"negative exptime", "set k 0 -1 1\r\na\r\nget k\r\nms k 1 T-1\r\na\r\nmg k v\r\n", false},
	{"pipeline mix", "set a 0 0 1\r\n1\r\nmg a v\r\nincr a 1\r\nma a v\r\nget a\r\nmd a\r\nmg a v\r\nmn\r\n", false},

	// connection closes
	{"http", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", false},
	{"http lowercase get", "get / HTTP/1.1\r\n", false},
	{"http unknown g", "gxx HTTP/1.1\r\n", false},
	{"http meta", "mx HTTP/1.1\r\nmxx HTTP/1.1\r\n", false},
	{"http bare", "HTTP/1.1\r\n", false},
	{"http after replies", "set k 0 0 1\r\na\r\nFOO bar HTTP/1.0\r\nget k\r\n", false},
	{"quit", "set k 0 0 1\r\na\r\nquit\r\nget k\r\n", false},
	{"long mg line", "mg k v" + strings.Repeat(" ", 3000) + "\r\n", true},
	{"long set no newline", "set k" + strings.Repeat(" ", 3000), true},
	{"long set line", "set k 0 0 1" + strings.Repeat(" ", 16000) + "\r\na\r\nget k\r\n", true},
	{"longest set line", "set k 0 0 1" + strings.Repeat(" ", 16384-13) + "\r\na\r\nget k\r\n", true},
	{"too long set line", "set k 0 0 1" + strings.Repeat(" ", 16384-12) + "\r\na\r\nget k\r\n", true},
	{"101 spaces get", strings.Repeat(" ", 101) + "get k" + strings.Repeat(" ", 3000), true},
	{"100 spaces get", strings.Repeat(" ", 100) + "get k" + strings.Repeat(" ", 3000) + "\r\n", true},
	{"long gat", "gat 1 k" + strings.Repeat(" ", 3000), true},
	{"long gets", "set k 0 0 1\r\na\r\ngets " + strings.Repeat("k ", 10000) + "\r\n", true},

	// long get-family lines: memcached serves a get or gets line of any
	// length, which the parser hands out in pieces
	{"get 3000 keys", longGet("get", 100, 3000, ""), true},
	{"gets 8000 keys", longGet("gets", 300, 8000, ""), true},
	{"get 200KB line", longGet("get", 50, 200<<10/13, ""), true},
	{"get long key at the end", longGet("get", 50, 8000, strings.Repeat("z", 251)), true},
	{"get long key in a 200KB line", longGet("get", 50, 200<<10/13, strings.Repeat("z", 251)), true},
	{"get nul in a long line", longGet("get", 50, 3000, "\x00 k1 k2"), true},
	{"gat 3000 keys", "set k 0 0 1\r\na\r\ngat 0 " + strings.Repeat("k ", 3000) + "\r\nmn\r\n", true},
	{"get only spaces", "get" + strings.Repeat(" ", 20000) + "\r\nmn\r\n", true},
	{"get pieces then pipeline", longGet("get", 10, 200, "") + "set k1 0 0 1\r\nz\r\nget k1 k2\r\n", false},
}

// longGet stores `stored` keys, then sends one op line of n keys cycling
// over twice as many (so half miss), then tail as the line's last word,
// then mn.
func longGet(op string, stored, n int, tail string) string {
	var b strings.Builder
	for i := 0; i < stored; i++ {
		fmt.Fprintf(&b, "set key:%d %d 0 %d\r\n%s\r\n", i, i, i%7, strings.Repeat("v", i%7))
	}
	b.WriteString(op)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, " key:%d", i%(2*stored))
	}
	if tail != "" {
		b.WriteString(" " + tail)
	}
	b.WriteString("\r\nmn\r\n")
	return b.String()
}

func TestDifferentialMemcached(t *testing.T) {
	needMemcached(t)
	for _, tc := range diffCases {
		t.Run(tc.name, func(t *testing.T) {
			diffRun(t, tc.name, []byte(tc.in), !tc.long)
		})
	}
}
