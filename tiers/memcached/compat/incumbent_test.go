package compat_test

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/tiers/memcached/compat"
)

// The harness shared by the tests against real incumbents: four memcached
// on loopback, keys written through the incumbent, and then each memcached
// asked which keys it holds. The layout under test must name exactly that
// server for every key.

const incumbentKeys = 2000

// fleet is four running memcached.
type fleet struct {
	addrs []string
	ports []int
}

func startFleet(t *testing.T) fleet {
	t.Helper()
	var f fleet
	for range 4 {
		s := memcachedtest.Start(t, "-m", "16")
		f.addrs = append(f.addrs, s.Addr)
		f.ports = append(f.ports, s.Port)
	}
	return f
}

// servers returns the fleet as compat servers with the given weights
// (nil: all 1) and names (nil: none).
func (f fleet) servers(weights []int, names []string) []compat.Server {
	out := make([]compat.Server, len(f.addrs))
	for i, p := range f.ports {
		out[i] = compat.Server{Host: "127.0.0.1", Port: p, Weight: 1}
		if weights != nil {
			out[i].Weight = weights[i]
		}
		if names != nil {
			out[i].Name = names[i]
		}
	}
	return out
}

// flush empties every server, between two incumbents' runs.
func (f fleet) flush(t *testing.T) {
	t.Helper()
	for _, a := range f.addrs {
		c := dial(t, a)
		fmt.Fprintf(c.w, "flush_all\r\n")
		c.flush(t)
		if l := c.line(t); l != "OK" {
			t.Fatalf("flush_all on %s: %q", a, l)
		}
		c.close()
	}
}

type conn struct {
	nc net.Conn
	r  *bufio.Reader
	w  *bufio.Writer
}

func dial(t *testing.T, addr string) *conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
	return &conn{nc: nc, r: bufio.NewReader(nc), w: bufio.NewWriter(nc)}
}

func (c *conn) close() { _ = c.nc.Close() }

func (c *conn) flush(t *testing.T) {
	t.Helper()
	if err := c.w.Flush(); err != nil {
		t.Fatal(err)
	}
}

func (c *conn) line(t *testing.T) string {
	t.Helper()
	l, err := c.r.ReadString('\n')
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return strings.TrimSuffix(l, "\r\n")
}

// setThrough writes every key through a memcached-protocol proxy at addr,
// pipelined by batches.
func setThrough(t *testing.T, addr string, keys []string) {
	t.Helper()
	c := dial(t, addr)
	defer c.close()
	for lo := 0; lo < len(keys); lo += 100 {
		hi := min(lo+100, len(keys))
		for _, k := range keys[lo:hi] {
			fmt.Fprintf(c.w, "set %s 0 0 1\r\nv\r\n", k)
		}
		c.flush(t)
		for _, k := range keys[lo:hi] {
			if l := c.line(t); l != "STORED" {
				t.Fatalf("set %q through %s: %q", k, addr, l)
			}
		}
	}
}

// holders asks each server of f for every key and returns, per key, the
// index of the one server that holds it. A key held by none or by two fails
// the test: the incumbent did not place it on exactly one server.
func holders(t *testing.T, f fleet, keys []string) []int {
	t.Helper()
	idx := make(map[string]int, len(keys))
	got := make([]int, len(keys))
	for i, k := range keys {
		idx[k] = i
		got[i] = -1
	}
	for si, a := range f.addrs {
		c := dial(t, a)
		for lo := 0; lo < len(keys); lo += 100 {
			hi := min(lo+100, len(keys))
			fmt.Fprintf(c.w, "get %s\r\n", strings.Join(keys[lo:hi], " "))
			c.flush(t)
			for {
				l := c.line(t)
				if l == "END" {
					break
				}
				f := strings.Fields(l)
				if len(f) != 4 || f[0] != "VALUE" {
					t.Fatalf("get on %s: %q", a, l)
				}
				n, _ := strconv.Atoi(f[3])
				if _, err := c.r.Discard(n + 2); err != nil {
					t.Fatal(err)
				}
				i := idx[f[1]]
				if got[i] != -1 {
					t.Fatalf("key %q on servers %d and %d", f[1], got[i], si)
				}
				got[i] = si
			}
		}
		c.close()
	}
	for i, s := range got {
		if s < 0 {
			t.Fatalf("key %q is on no server: the incumbent did not store it", keys[i])
		}
	}
	return got
}

// assertPlacement fails t unless l names, for every key, the server that
// holds it, and logs the share it got right (the hit ratio strata would see
// reading the incumbent's fleet).
func assertPlacement(t *testing.T, l *compat.Layout, keys []string, got []int) {
	t.Helper()
	per := make([]int, l.Servers())
	bad := 0
	for i, k := range keys {
		per[got[i]]++
		if s := l.Server([]byte(k)); s != got[i] {
			if bad < 5 {
				t.Errorf("key %q: layout says server %d, the incumbent put it on %d", k, s, got[i])
			}
			bad++
		}
	}
	t.Logf("hit ratio %.2f%% (%d of %d keys on the server the layout names); keys per server %v",
		100*float64(len(keys)-bad)/float64(len(keys)), len(keys)-bad, len(keys), per)
	if bad > 0 {
		t.Fatalf("%d of %d keys misplaced", bad, len(keys))
	}
}

// testKeys returns n distinct memcached keys of varied length and bytes:
// printable ASCII, with a byte of 0x80 or above in one key in seven when
// highBytes is set (the incumbents that read keys through a signed char
// treat those differently), and a {tag} in one key in three when tags is.
func testKeys(n int, seed uint64, highBytes, tags bool) []string {
	r := rand.New(rand.NewPCG(seed, 0x636f6d706174))
	keys := make([]string, n)
	for i := range keys {
		var b strings.Builder
		for range r.IntN(40) {
			c := byte(0x21 + r.IntN(0x7e-0x21+1))
			if c == '{' || c == '}' {
				c = 'x'
			}
			b.WriteByte(c)
		}
		if highBytes && i%7 == 3 {
			b.WriteString("\xc3\xa9\xff")
		}
		k := b.String() + ":" + strconv.Itoa(i)
		if tags && i%3 == 0 {
			k = "u" + strconv.Itoa(i%5) + "{" + strconv.Itoa(r.IntN(50)) + "}" + k
		}
		keys[i] = k
	}
	return keys
}
