package locality

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/toxics"
	"github.com/rs/zerolog"
)

// The kernel of the machines this runs on has no netem, so the WAN between
// regions is made in process: every region link (and, for full
// replication, every cross-region client connection) goes through a
// toxiproxy proxy with a latency toxic on each direction, so a round trip
// costs twice the one-way delay. A byteCount toxic on each direction counts
// what crosses.

// byteCountType is the toxic type name of byteCount in toxiproxy's
// registry (process-global, hence the bench's own prefix).
const byteCountType = "strata_bench_bytes"

func init() { toxics.Register(byteCountType, new(byteCount)) }

// byteCount passes data through unchanged and counts it. toxiproxy makes
// one instance per toxic and runs its Pipe on one goroutine per
// connection, so n is shared and atomic.
type byteCount struct {
	n atomic.Int64
}

func (t *byteCount) Pipe(stub *toxics.ToxicStub) {
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			t.n.Add(int64(len(c.Data)))
			stub.Output <- c
		}
	}
}

// link is one direction of travel between two regions: a proxy listening
// on loopback that forwards to upstream with the delay both ways.
type link struct {
	from, to int
	proxy    *toxiproxy.Proxy
	counts   []*byteCount // upstream and downstream
}

// Addr is where the sending region connects.
func (l *link) Addr() string { return l.proxy.Listen }

// Bytes is what crossed in both directions so far.
func (l *link) Bytes() int64 {
	var n int64
	for _, c := range l.counts {
		n += c.n.Load()
	}
	return n
}

// wan is the set of proxies of one placement's run. It owns them; Close
// stops every one.
type wan struct {
	server *toxiproxy.ApiServer
	links  []*link
}

func newWAN() *wan {
	return &wan{server: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())}
}

// add starts a proxy on listen ("127.0.0.1:0" for any port) to upstream
// with oneWay delay in each direction.
func (w *wan) add(name string, from, to int, listen, upstream string, oneWay time.Duration) (*link, error) {
	p := toxiproxy.NewProxy(w.server, name, listen, upstream)
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("toxiproxy %s on %s: %w", name, listen, err)
	}
	l := &link{from: from, to: to, proxy: p}
	w.links = append(w.links, l)
	for _, dir := range []string{"upstream", "downstream"} {
		lat := fmt.Sprintf(`{"name":"delay_%s","type":"latency","stream":%q,"attributes":{"latency":%d}}`,
			dir, dir, oneWay.Milliseconds())
		if _, err := p.Toxics.AddToxicJson(strings.NewReader(lat)); err != nil {
			return nil, fmt.Errorf("toxiproxy %s: latency toxic: %w", name, err)
		}
		cnt := fmt.Sprintf(`{"name":"bytes_%s","type":%q,"stream":%q}`, dir, byteCountType, dir)
		wrapper, err := p.Toxics.AddToxicJson(strings.NewReader(cnt))
		if err != nil {
			return nil, fmt.Errorf("toxiproxy %s: byte count toxic: %w", name, err)
		}
		l.counts = append(l.counts, wrapper.Toxic.(*byteCount))
	}
	return l, nil
}

// Bytes is what crossed every link so far.
func (w *wan) Bytes() int64 {
	var n int64
	for _, l := range w.links {
		n += l.Bytes()
	}
	return n
}

// Close stops every proxy and closes its connections. Idempotent.
func (w *wan) Close() {
	for _, l := range w.links {
		l.proxy.Stop()
	}
	w.links = nil
}
