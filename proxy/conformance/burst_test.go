package conformance

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// burstRequest is one request of the burst with the exact reply a memcached
// must give to it at its place in the sequence.
type burstRequest struct {
	req       string
	want      string
	retrieval bool // the reply is VALUE units up to END
}

// burstModel is the cache as the burst leaves it, request after request.
type burstModel struct {
	items map[string]burstItem
}

type burstItem struct {
	value string
	flags uint32
}

// burstScript generates n requests over a few keys and, from the model, the
// reply each must get. Every request has exactly one reply (no noreply, no
// quiet mode). incr only ever grows a number, so memcached's in-place
// rewrite (which pads a shrinking number with spaces) never comes into play.
func burstScript(rng *rand.Rand, prefix string, n int) []burstRequest {
	m := burstModel{items: map[string]burstItem{}}
	keys := make([]string, 12)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s:%d", prefix, i)
	}
	key := func() string { return keys[rng.IntN(len(keys))] }
	value := func() string {
		switch rng.IntN(10) {
		case 0, 1, 2:
			return strconv.FormatUint(rng.Uint64N(1_000_000), 10)
		case 3:
			return strings.Repeat("z", 4000+rng.IntN(8000)) // crosses read boundaries
		case 4:
			return ""
		default:
			b := make([]byte, 1+rng.IntN(40))
			for i := range b {
				b[i] = 'a' + byte(rng.IntN(26))
			}
			return string(b)
		}
	}
	out := make([]burstRequest, 0, n)
	for len(out) < n {
		var r burstRequest
		switch op := rng.IntN(100); {
		case op < 20: // set
			k, v, f := key(), value(), rng.Uint32()
			r.req = fmt.Sprintf("set %s %d 0 %d\r\n%s\r\n", k, f, len(v), v)
			r.want = "STORED\r\n"
			m.items[k] = burstItem{v, f}
		case op < 27: // add
			k, v := key(), value()
			r.req = fmt.Sprintf("add %s 0 0 %d\r\n%s\r\n", k, len(v), v)
			if _, ok := m.items[k]; ok {
				r.want = "NOT_STORED\r\n"
			} else {
				r.want = "STORED\r\n"
				m.items[k] = burstItem{v, 0}
			}
		case op < 45: // get of one to three keys
			ks := []string{key()}
			for rng.IntN(3) == 0 && len(ks) < 3 {
				ks = append(ks, key())
			}
			r.req = "get " + strings.Join(ks, " ") + "\r\n"
			r.retrieval = true
			var sb strings.Builder
			for _, k := range ks {
				if it, ok := m.items[k]; ok {
					fmt.Fprintf(&sb, "VALUE %s %d %d\r\n%s\r\n", k, it.flags, len(it.value), it.value)
				}
			}
			r.want = sb.String() + "END\r\n"
		case op < 55: // delete
			k := key()
			r.req = "delete " + k + "\r\n"
			if _, ok := m.items[k]; ok {
				r.want = "DELETED\r\n"
				delete(m.items, k)
			} else {
				r.want = "NOT_FOUND\r\n"
			}
		case op < 65: // incr
			k, d := key(), rng.Uint64N(1000)
			r.req = fmt.Sprintf("incr %s %d\r\n", k, d)
			r.want = m.arith(k, d, func(n string) string { return n + "\r\n" }, "NOT_FOUND\r\n")
		case op < 72: // ma
			k := key()
			r.req = "ma " + k + " v\r\n"
			r.want = m.arith(k, 1, func(n string) string { return fmt.Sprintf("VA %d\r\n%s\r\n", len(n), n) }, "NF\r\n")
		case op < 86: // mg
			k := key()
			r.req = "mg " + k + " s v f\r\n"
			if it, ok := m.items[k]; ok {
				r.want = fmt.Sprintf("VA %d s%d f%d\r\n%s\r\n", len(it.value), len(it.value), it.flags, it.value)
			} else {
				r.want = "EN\r\n"
			}
		default: // ms
			k, v, f := key(), value(), rng.Uint32()
			r.req = fmt.Sprintf("ms %s %d F%d\r\n%s\r\n", k, len(v), f, v)
			r.want = "HD\r\n"
			m.items[k] = burstItem{v, f}
		}
		out = append(out, r)
	}
	return out
}

// arith applies an increment to the model and returns the expected reply.
func (m *burstModel) arith(k string, delta uint64, hit func(string) string, miss string) string {
	it, ok := m.items[k]
	if !ok {
		return miss
	}
	n, err := strconv.ParseUint(it.value, 10, 64)
	if err != nil {
		return "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"
	}
	s := strconv.FormatUint(n+delta, 10)
	it.value = s
	m.items[k] = it
	return hit(s)
}

func TestBurst(t *testing.T) { forEachTarget(t, testBurst) }

func testBurst(t *testing.T, addr string) {
	script := burstScript(rand.New(rand.NewPCG(2013, 11)), "burst", 1000)
	var all bytes.Buffer
	for _, r := range script {
		all.WriteString(r.req)
	}
	c := dial(t, addr)
	deadline := time.Now().Add(30 * time.Second)
	done := writeAsync(c.conn, all.Bytes(), 0, deadline) // one write of every request
	_ = c.conn.SetReadDeadline(deadline)
	for i, r := range script {
		var got []byte
		if r.retrieval {
			units, err := c.readRetrieval()
			for _, u := range units {
				got = append(got, u.raw...)
			}
			if err != nil {
				t.Fatalf("reply %d of %d (request %q): %v after %q", i+1, len(script), r.req, err, got)
			}
		} else {
			u, err := c.readUnit()
			if err != nil {
				t.Fatalf("reply %d of %d (request %q): %v", i+1, len(script), r.req, err)
			}
			got = u.raw
		}
		if string(got) != r.want {
			t.Fatalf("reply %d of %d is wrong\nrequest: %s\nwant:    %s\ngot:     %s",
				i+1, len(script), quoteCapped([]byte(r.req)), quoteCapped([]byte(r.want)), quoteCapped(got))
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("writing the burst: %v", err)
	}
	// Nothing may follow the 1,000th reply.
	u, err := c.do("mn\r\n")
	if err != nil || string(u.raw) != "MN\r\n" {
		t.Fatalf("after the burst: %q, %v; want MN", u.raw, err)
	}
}

// TestBurstScriptIsMixed guards the generator: a burst that lost a kind of
// request or never hit would test less than it claims.
func TestBurstScriptIsMixed(t *testing.T) {
	script := burstScript(rand.New(rand.NewPCG(2013, 11)), "burst", 1000)
	count := map[string]int{}
	for _, r := range script {
		verb, _, _ := strings.Cut(r.req, " ")
		count[verb]++
		switch {
		case strings.HasPrefix(r.want, "VALUE"):
			count["get-hit"]++
		case strings.HasPrefix(r.want, "VA "):
			count["meta-hit"]++
		case strings.HasPrefix(r.want, "CLIENT_ERROR"):
			count["non-numeric"]++
		case r.want != "STORED\r\n" && (verb == "incr"):
			count["incr-hit-or-miss"]++
		}
	}
	for _, k := range []string{"set", "add", "get", "delete", "incr", "ma", "mg", "ms", "get-hit", "meta-hit", "non-numeric", "incr-hit-or-miss"} {
		if count[k] < 10 {
			t.Errorf("the burst has only %d of %q; counts %v", count[k], k, count)
		}
	}
	if len(script) != 1000 {
		t.Errorf("burst has %d requests, want 1000", len(script))
	}
}
