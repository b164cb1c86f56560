package protocol

import (
	"errors"
	"testing"

	"github.com/strata-cache/strata/tiers"
)

// Replies to tier outcomes a memcached behind the differential tests does
// not produce on demand (errors, memory pressure, win tokens).
func TestAppendReplyStatuses(t *testing.T) {
	backend := errors.New("backend 10.0.0.1:11211 timed out\r\nafter 5s")
	hit := tiers.Result{Status: tiers.StatusHit, Value: []byte("hello"), ClientFlags: 7, CAS: 42, TTL: -1, Size: 5}
	tests := []struct {
		name string
		in   string
		res  []tiers.Result
		want string
	}{
		{"get hit", "get k\r\n", []tiers.Result{hit}, "VALUE k 7 5\r\nhello\r\nEND\r\n"},
		{"gets hit", "gets k\r\n", []tiers.Result{hit}, "VALUE k 7 5 42\r\nhello\r\nEND\r\n"},
		{"gats hit", "gats 5 k\r\n", []tiers.Result{hit}, "VALUE k 7 5 42\r\nhello\r\nEND\r\n"},
		{"get miss", "get k\r\n", []tiers.Result{{Status: tiers.StatusMiss}}, "END\r\n"},
		{"get error", "get a b\r\n", []tiers.Result{hit, {Status: tiers.StatusError, Err: backend}},
			"SERVER_ERROR backend 10.0.0.1:11211 timed out  after 5s\r\n"},
		{"get missing result", "get a b\r\n", []tiers.Result{hit}, "SERVER_ERROR proxy error: no result for request\r\n"},
		{"gat none", "gat 5\r\n", nil, "END\r\n"},
		{"set stored", "set k 0 0 1\r\nx\r\n", []tiers.Result{{Status: tiers.StatusStored}}, "STORED\r\n"},
		{"set too large", "set k 0 0 1\r\nx\r\n", []tiers.Result{{Status: tiers.StatusTooLarge}}, "SERVER_ERROR object too large for cache\r\n"},
		{"set no memory", "set k 0 0 1\r\nx\r\n", []tiers.Result{{Status: tiers.StatusNoMemory}}, "SERVER_ERROR out of memory storing object\r\n"},
		{"set error", "set k 0 0 1\r\nx\r\n", []tiers.Result{{Status: tiers.StatusError}}, "SERVER_ERROR unknown error\r\n"},
		{"set noreply error", "set k 0 0 1 noreply\r\nx\r\n", []tiers.Result{{Status: tiers.StatusError, Err: backend}}, ""},
		{"add not stored", "add k 0 0 1\r\nx\r\n", []tiers.Result{{Status: tiers.StatusNotStored}}, "NOT_STORED\r\n"},
		{"cas exists", "cas k 0 0 1 5\r\nx\r\n", []tiers.Result{{Status: tiers.StatusExists}}, "EXISTS\r\n"},
		{"cas not found", "cas k 0 0 1 5\r\nx\r\n", []tiers.Result{{Status: tiers.StatusNotFound}}, "NOT_FOUND\r\n"},
		{"delete", "delete k\r\n", []tiers.Result{{Status: tiers.StatusStored}}, "DELETED\r\n"},
		{"delete miss", "delete k\r\n", []tiers.Result{{Status: tiers.StatusMiss}}, "NOT_FOUND\r\n"},
		{"touch", "touch k 1\r\n", []tiers.Result{{Status: tiers.StatusHit}}, "TOUCHED\r\n"},
		{"touch miss", "touch k 1\r\n", []tiers.Result{{Status: tiers.StatusMiss}}, "NOT_FOUND\r\n"},
		{"incr", "incr k 1\r\n", []tiers.Result{{Status: tiers.StatusStored, Value: []byte("18446744073709551615")}}, "18446744073709551615\r\n"},
		{"incr miss", "incr k 1\r\n", []tiers.Result{{Status: tiers.StatusMiss}}, "NOT_FOUND\r\n"},
		{"incr non-numeric", "incr k 1\r\n", []tiers.Result{{Status: tiers.StatusNonNumeric}}, "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"},
		{"decr no memory", "decr k 1\r\n", []tiers.Result{{Status: tiers.StatusNoMemory}}, "SERVER_ERROR out of memory\r\n"},
		{"flush", "flush_all\r\n", []tiers.Result{{Status: tiers.StatusStored}}, "OK\r\n"},
		{"flush error", "flush_all\r\n", []tiers.Result{{Status: tiers.StatusError, Err: backend}}, "SERVER_ERROR backend 10.0.0.1:11211 timed out  after 5s\r\n"},
		{"verbosity", "verbosity 1\r\n", nil, "OK\r\n"},
		{"verbosity noreply", "verbosity 1 noreply\r\n", nil, ""},
		{"version", "version\r\n", []tiers.Result{{Value: []byte("strata 1.0")}}, "VERSION strata 1.0\r\n"},
		{"stats", "stats\r\n", nil, ""},
		{"mn", "mn\r\n", nil, "MN\r\n"},

		{"mg all flags", "mg k s v t c f l h k O9 q\r\n",
			[]tiers.Result{{Status: tiers.StatusHit, Value: []byte("hi"), Size: 2, TTL: 30, CAS: 8, ClientFlags: 3, LastAccess: 12, Fetched: true, Win: true, Stale: true, AlreadyWon: true}},
			"VA 2 s2 t30 c8 f3 l12 h1 kk O9 Z X W\r\nhi\r\n"},
		{"mg hd", "mg k t h\r\n", []tiers.Result{{Status: tiers.StatusHit, TTL: -1}}, "HD t-1 h0\r\n"},
		{"mg base64", "mg AAEC b k v\r\n", []tiers.Result{{Status: tiers.StatusHit, Value: []byte("x"), KeyBinary: true}}, "VA 1 kAAEC b\r\nx\r\n"},
		{"mg base64 of a text item", "mg AAEC b k v\r\n", []tiers.Result{{Status: tiers.StatusHit, Value: []byte("x")}}, "VA 1 k\x00\x01\x02\r\nx\r\n"},
		{"mg miss quiet", "mg k q k\r\n", []tiers.Result{{Status: tiers.StatusMiss}}, ""},
		{"mg miss", "mg k O1 k s\r\n", []tiers.Result{{Status: tiers.StatusMiss}}, "EN O1 kk\r\n"},
		{"mg error quiet", "mg k q v\r\n", []tiers.Result{{Status: tiers.StatusError, Err: backend}}, "SERVER_ERROR backend 10.0.0.1:11211 timed out  after 5s\r\n"},
		{"ms stored quiet", "ms k 1 q c\r\nx\r\n", []tiers.Result{{Status: tiers.StatusStored, CAS: 5}}, ""},
		{"ms stored", "ms k 1 c O1 k T5\r\nx\r\n", []tiers.Result{{Status: tiers.StatusStored, CAS: 5}}, "HD c5 O1 kk\r\n"},
		{"ms not stored quiet", "ms k 1 q ME O2\r\nx\r\n", []tiers.Result{{Status: tiers.StatusNotStored}}, "NS O2\r\n"},
		{"ms exists", "ms k 1 C4\r\nx\r\n", []tiers.Result{{Status: tiers.StatusExists}}, "EX\r\n"},
		{"ms not found", "ms k 1 C4\r\nx\r\n", []tiers.Result{{Status: tiers.StatusNotFound}}, "NF\r\n"},
		{"ms too large quiet", "ms k 1 q\r\nx\r\n", []tiers.Result{{Status: tiers.StatusTooLarge}}, "SERVER_ERROR object too large for cache\r\n"},
		{"ms no memory", "ms k 1\r\nx\r\n", []tiers.Result{{Status: tiers.StatusNoMemory}}, "SERVER_ERROR out of memory storing object\r\n"},
		{"md quiet", "md k q\r\n", []tiers.Result{{Status: tiers.StatusStored}}, ""},
		{"md miss quiet", "md k q O3 k\r\n", []tiers.Result{{Status: tiers.StatusMiss}}, "NF O3 kk\r\n"},
		{"md exists", "md k C1\r\n", []tiers.Result{{Status: tiers.StatusExists}}, "EX\r\n"},
		{"ma value", "ma k v t c k O4\r\n", []tiers.Result{{Status: tiers.StatusStored, Value: []byte("12"), CAS: 3, TTL: -1}}, "VA 2 t-1 c3 kk O4\r\n12\r\n"},
		{"ma quiet", "ma k q v\r\n", []tiers.Result{{Status: tiers.StatusStored, Value: []byte("12")}}, ""},
		{"ma miss", "ma k q k\r\n", []tiers.Result{{Status: tiers.StatusMiss}}, "NF kk\r\n"},
		{"ma exists", "ma k C1\r\n", []tiers.Result{{Status: tiers.StatusExists}}, "EX\r\n"},
		{"ma non-numeric", "ma k q\r\n", []tiers.Result{{Status: tiers.StatusNonNumeric}}, "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"},
		{"ma no memory", "ma k\r\n", []tiers.Result{{Status: tiers.StatusNoMemory}}, "SERVER_ERROR out of memory\r\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd, n, err := parseOne(t, tc.in)
			if err != nil || n != len(tc.in) {
				t.Fatalf("Parse = %d, %v", n, err)
			}
			got := cmd.AppendReply([]byte("prefix:"), tc.res)
			if string(got) != "prefix:"+tc.want {
				t.Fatalf("got  %q\nwant %q", got, "prefix:"+tc.want)
			}
		})
	}
}

func TestAppendStat(t *testing.T) {
	var b []byte
	b = AppendStatString(b, "version", "1.0")
	b = AppendStatUint(b, "curr_items", 18446744073709551615)
	b = AppendStatInt(b, "delta", -3)
	b = AppendEnd(b)
	b = AppendError(b)
	b = AppendVersion(b, "x")
	want := "STAT version 1.0\r\nSTAT curr_items 18446744073709551615\r\nSTAT delta -3\r\nEND\r\nERROR\r\nVERSION x\r\n"
	if string(b) != want {
		t.Fatalf("got %q, want %q", b, want)
	}
}

func TestServerErrorReasonBounded(t *testing.T) {
	long := make([]byte, 5000)
	for i := range long {
		long[i] = 'e'
	}
	r := tiers.Result{Status: tiers.StatusError, Err: errors.New(string(long))}
	got := appendServerError(nil, &r)
	if len(got) != len(sServerError)+maxReasonLen+2 {
		t.Fatalf("reply of %d bytes", len(got))
	}
}

func TestOpcodeString(t *testing.T) {
	if OpMetaGet.String() != "mg" || OpError.String() != "error" || Opcode(200).String() != "unknown" {
		t.Fatal("opcode names")
	}
	if !OpMetaArith.IsMeta() || OpGet.IsMeta() {
		t.Fatal("IsMeta")
	}
}
