package embedded

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
)

// startMemcached runs a private memcached and returns its address.
// Without the LRU maintainer and crawler threads nothing but our own
// connection ever holds a reference to an item, so memcached's in-place
// incr (taken only when no one else holds the item) is as deterministic as
// the store's.
func startMemcached(t *testing.T) string {
	t.Helper()
	return memcachedtest.Start(t, "-o", "no_lru_crawler,no_lru_maintainer").Addr
}

// mcConn is a raw connection to memcached.
type mcConn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dialMemcached(t *testing.T, addr string) *mcConn {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &mcConn{t: t, c: c, r: bufio.NewReaderSize(c, 64<<10)}
}

func (m *mcConn) line() string {
	m.t.Helper()
	s, err := m.r.ReadString('\n')
	if err != nil {
		m.t.Fatalf("reading from memcached: %v", err)
	}
	return strings.TrimSuffix(s, "\r\n")
}

func (m *mcConn) block(n int) string {
	m.t.Helper()
	buf := make([]byte, n+2)
	if _, err := io.ReadFull(m.r, buf); err != nil {
		m.t.Fatalf("reading from memcached: %v", err)
	}
	return string(buf[:n])
}

// roundTrip sends one command and returns its reply in script form, with
// CAS values shifted back by casBase.
func (m *mcConn) roundTrip(wire string, casBase uint64) string {
	m.t.Helper()
	m.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(m.c, wire); err != nil {
		m.t.Fatal(err)
	}
	first := m.line()
	f := strings.Fields(first)
	parts := []string{normalizeCAS(first, casBase)}
	switch {
	case len(f) > 1 && f[0] == "VA":
		n, _ := strconv.Atoi(f[1])
		parts = append(parts, m.block(n))
	case len(f) > 3 && f[0] == "VALUE":
		for {
			n, _ := strconv.Atoi(f[3])
			if len(f) > 4 {
				cas, _ := strconv.ParseUint(f[4], 10, 64)
				parts[len(parts)-1] = strings.Join(append(f[:4:4], strconv.FormatUint(cas-casBase, 10)), " ")
			}
			parts = append(parts, m.block(n))
			next := m.line()
			parts = append(parts, next)
			if next == "END" {
				break
			}
			f = strings.Fields(next)
		}
	}
	return strings.Join(parts, "|")
}

// normalizeCAS rewrites the c<cas> tokens of a meta reply line.
func normalizeCAS(line string, casBase uint64) string {
	f := strings.Fields(line)
	if len(f) == 0 || !(f[0] == "HD" || f[0] == "VA" || f[0] == "NS" || f[0] == "EX" || f[0] == "NF") {
		return line
	}
	for i := 1; i < len(f); i++ {
		if f[i][0] == 'c' {
			if n, err := strconv.ParseUint(f[i][1:], 10, 64); err == nil && n != 0 {
				f[i] = "c" + strconv.FormatUint(n-casBase, 10)
			}
		}
	}
	return strings.Join(f, " ")
}

// sameReply compares a memcached reply with the expected one. Two fields
// depend on which second each side's clock is in and may differ by one:
// t (remaining TTL) and l (seconds since access). A t that memcached
// prints as a huge number is its unsigned wrap-around of "already expired",
// which the store reports as 0.
func sameReply(got, want string) bool {
	if got == want {
		return true
	}
	gp, wp := strings.Split(got, "|"), strings.Split(want, "|")
	if len(gp) != len(wp) {
		return false
	}
	for i := range gp {
		if gp[i] == wp[i] {
			continue
		}
		gf, wf := strings.Fields(gp[i]), strings.Fields(wp[i])
		if len(gf) != len(wf) {
			return false
		}
		for j := range gf {
			if gf[j] == wf[j] {
				continue
			}
			g, w := gf[j], wf[j]
			if g[0] != w[0] || (g[0] != 't' && g[0] != 'l') {
				return false
			}
			gn, err1 := strconv.ParseInt(g[1:], 10, 64)
			wn, err2 := strconv.ParseInt(w[1:], 10, 64)
			if err1 != nil || err2 != nil || gn < 0 || wn < 0 {
				return false
			}
			if g[0] == 't' && gn > 1<<31 {
				gn = 0
			}
			if gn-wn > 1 || wn-gn > 1 {
				return false
			}
		}
	}
	return true
}

// beginScenario flushes memcached and returns the CAS it has handed out so
// far, so that the scenario's CAS numbers (which start from zero in a fresh
// store) can be compared.
func (m *mcConn) beginScenario() uint64 {
	m.t.Helper()
	if got := m.roundTrip("flush_all\r\n", 0); got != "OK" {
		m.t.Fatalf("flush_all: %q", got)
	}
	got := m.roundTrip("ms __probe 1 c\r\nx\r\n", 0)
	var base uint64
	if _, err := fmt.Sscanf(got, "HD c%d", &base); err != nil {
		m.t.Fatalf("probe: %q", got)
	}
	return base
}

// TestScenariosAgainstMemcached replays every clock-free scenario against a
// real memcached 1.6.18 and checks it gives the replies the store is tested
// to give.
func TestScenariosAgainstMemcached(t *testing.T) {
	addr := startMemcached(t)
	mc := dialMemcached(t, addr)
	if v := mc.roundTrip("version\r\n", 0); v != "VERSION 1.6.18" {
		t.Logf("reference is memcached 1.6.18, running against %q", v)
	}
	ran := 0
	for _, sc := range scenarios {
		if sc.usesClock() {
			continue
		}
		ran++
		t.Run(sc.name, func(t *testing.T) {
			mc.t = t
			base := mc.beginScenario()
			for n, step := range sc.steps {
				cmd, want := splitStep(t, step)
				p := parseStep(t, cmd, time.Now().Unix())
				got := mc.roundTrip(p.wire(base), base)
				if !sameReply(got, want) {
					t.Fatalf("step %d %s\nmemcached %q\n     want %q", n, short(cmd), short(got), short(want))
				}
			}
		})
	}
	if ran < 20 {
		t.Fatalf("only %d scenarios replayed", ran)
	}
}
