package locality

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/poll"
)

// A link delays each direction by the one-way delay and counts every byte
// both ways.
func TestLinkDelaysAndCounts(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() { // an echo server
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	w := newWAN()
	defer w.Close()
	const oneWay = 20 * time.Millisecond
	lk, err := w.add("a->b", 0, 1, "127.0.0.1:0", l.Addr().String(), oneWay)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", lk.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	const msg = "hello through the wan\n"
	for range 3 {
		t0 := time.Now()
		if _, err := c.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		got, err := br.ReadString('\n')
		if err != nil || got != msg {
			t.Fatalf("echo %q, %v", got, err)
		}
		// The delay is injected, so it is a floor whatever the machine's
		// load.
		if rt := time.Since(t0); rt < 2*oneWay {
			t.Errorf("round trip %v, below twice the one-way delay %v", rt, oneWay)
		}
	}
	want := int64(3 * 2 * len(msg))
	// The counts land as the toxics pass chunks on.
	poll.Until(t, 5*time.Second, "the link to count every byte", func() bool { return lk.Bytes() == want })
	if got := lk.Bytes(); got != want || w.Bytes() != want {
		t.Errorf("counted %d (wan %d), want %d", got, w.Bytes(), want)
	}
}

func TestParseMetrics(t *testing.T) {
	text := strings.Join([]string{
		`# TYPE strata_locality_requests_total counter`,
		`strata_locality_requests_total{result="local"} 90`,
		`strata_locality_requests_total{result="forwarded"} 10`,
		`strata_locality_requests_total{result="wrong_owner"} 2`,
		`strata_locality_requests_total{result="owner_unreachable"} 1`,
		`# TYPE strata_locality_location_cache_total counter`,
		`strata_locality_location_cache_total{result="hit"} 98`,
		`strata_locality_location_cache_total{result="miss"} 2`,
		`# TYPE strata_locality_migrations_total counter`,
		`strata_locality_migrations_total 4`,
		`# TYPE strata_locality_counter_bytes_total counter`,
		`strata_locality_counter_bytes_total 123`,
		`# TYPE strata_other gauge`,
		`strata_other 7`,
		``,
	}, "\n")
	s, err := parseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := sample{local: 90, forwarded: 10, wrongOwner: 2, unreachable: 1, cacheHit: 98, cacheMiss: 2, migrations: 4, counterBytes: 123}
	if s != want {
		t.Errorf("got %+v, want %+v", s, want)
	}
	if d := s.add(s).sub(s); d != s {
		t.Errorf("add then sub: %+v", d)
	}
}
