package locality

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// A client connection speaks the memcached text protocol, one request at a
// time: the latency of a request is its own round trip, and a forwarded
// one carries the WAN's.

const ioTimeout = 5 * time.Second

// countingConn counts the bytes a client exchanges with its strata: the
// data traffic that counter traffic is compared with.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	k, err := c.Conn.Read(p)
	c.n.Add(int64(k))
	return k, err
}

func (c countingConn) Write(p []byte) (int, error) {
	k, err := c.Conn.Write(p)
	c.n.Add(int64(k))
	return k, err
}

// mcConn is one client connection. Not safe for concurrent use.
type mcConn struct {
	addr  string
	bytes *atomic.Int64 // nil: not counted
	nc    net.Conn
	br    *bufio.Reader
}

func (c *mcConn) dial() error {
	if c.nc != nil {
		return nil
	}
	nc, err := net.DialTimeout("tcp", c.addr, time.Second)
	if err != nil {
		return err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	c.nc = nc
	if c.bytes != nil {
		c.nc = countingConn{Conn: nc, n: c.bytes}
	}
	c.br = bufio.NewReaderSize(c.nc, 16<<10)
	return nil
}

func (c *mcConn) close() {
	if c.nc != nil {
		_ = c.nc.Close()
		c.nc = nil
	}
}

// errServer is a SERVER_ERROR, CLIENT_ERROR or ERROR reply: the request
// failed, the connection is fine.
var errServer = errors.New("error reply")

// send writes one request without waiting for its reply.
func (c *mcConn) send(req []byte) error {
	if err := c.dial(); err != nil {
		return err
	}
	_ = c.nc.SetDeadline(time.Now().Add(ioTimeout))
	if _, err := c.nc.Write(req); err != nil {
		c.close()
		return err
	}
	return nil
}

// reply reads one reply: hit for a get's VALUE, or the status line of a
// storage or delete command.
func (c *mcConn) reply() (hit bool, err error) {
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		c.close()
		return false, err
	}
	switch {
	case bytes.HasPrefix(line, []byte("VALUE ")):
		f := bytes.Fields(line)
		if len(f) < 4 {
			c.close()
			return false, fmt.Errorf("bad VALUE line %q", line)
		}
		n, err := strconv.Atoi(string(f[3]))
		if err != nil {
			c.close()
			return false, fmt.Errorf("bad VALUE line %q", line)
		}
		if _, err := c.br.Discard(n + 2); err != nil {
			c.close()
			return false, err
		}
		end, err := c.br.ReadSlice('\n')
		if err != nil || !bytes.Equal(end, []byte("END\r\n")) {
			c.close()
			return false, fmt.Errorf("no END after a value: %q %v", end, err)
		}
		return true, nil
	case bytes.HasPrefix(line, []byte("SERVER_ERROR")), bytes.HasPrefix(line, []byte("CLIENT_ERROR")), bytes.Equal(line, []byte("ERROR\r\n")):
		return false, fmt.Errorf("%w: %s", errServer, bytes.TrimSpace(line))
	}
	return false, nil // END (a miss), STORED, NOT_STORED, DELETED, NOT_FOUND
}

func (c *mcConn) do(req []byte) (bool, error) {
	if err := c.send(req); err != nil {
		return false, err
	}
	return c.reply()
}

func appendGet(dst []byte, key string) []byte {
	dst = append(dst, "get "...)
	dst = append(dst, key...)
	return append(dst, "\r\n"...)
}

func appendSet(dst []byte, key string, value []byte) []byte {
	dst = append(dst, "set "...)
	dst = append(dst, key...)
	dst = append(dst, " 0 0 "...)
	dst = strconv.AppendInt(dst, int64(len(value)), 10)
	dst = append(dst, "\r\n"...)
	dst = append(dst, value...)
	return append(dst, "\r\n"...)
}

func appendDelete(dst []byte, key string) []byte {
	dst = append(dst, "delete "...)
	dst = append(dst, key...)
	return append(dst, "\r\n"...)
}

// tally is one worker's counts; the run merges them when the day ends.
type tally struct {
	requests, errors, misses, remote int64 // remote: client-side (full replication's writes)
	// sent counts what went to the region's own strata, read-through
	// fills included: strata's forwarded count is a share of it. The win
	// arrays count the same within each steady window.
	sent               int64
	winSent, winRemote [maxWindows]int64
	all, steady        *hdrhistogram.Histogram
	firstErr           error
}

func newTally() *tally {
	return &tally{all: newHist(), steady: newHist()}
}

// Latencies from 10µs to 10s at 3 significant digits.
func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(10, 10_000_000, 3) }

func (t *tally) merge(o *tally) {
	t.requests += o.requests
	t.errors += o.errors
	t.misses += o.misses
	t.remote += o.remote
	t.sent += o.sent
	for i := range t.winSent {
		t.winSent[i] += o.winSent[i]
		t.winRemote[i] += o.winRemote[i]
	}
	t.all.Merge(o.all)
	t.steady.Merge(o.steady)
	if t.firstErr == nil {
		t.firstErr = o.firstErr
	}
}

// worker is one client connection of one region, paced so that the
// region's clients together send their share of the rate: a region's share
// follows how many users it serves at that time of day.
type worker struct {
	region int
	day    Day
	cfg    *Config
	rng    *rand.Rand
	local  *mcConn
	remote []*mcConn // full replication: the other regions' strata, through the WAN
	value  []byte
	buf    []byte
	tally  *tally
}

// run sends requests from start until start+cfg.Duration.
func (w *worker) run(ctx context.Context, start time.Time, steady func(time.Duration) int) {
	defer w.local.close()
	for _, r := range w.remote {
		defer r.close()
	}
	total := float64(w.day.Regions * w.day.Users)
	next := start
	for {
		now := time.Now()
		el := now.Sub(start)
		if el >= w.cfg.Duration || ctx.Err() != nil {
			return
		}
		phase := float64(el) / float64(w.cfg.Duration)
		rate := w.cfg.Rate * float64(w.day.Present(w.region, phase)) / total / float64(w.cfg.Conns)
		if next.After(now) {
			t := time.NewTimer(next.Sub(now))
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			continue
		}
		next = next.Add(time.Duration(float64(time.Second) / rate))
		if next.Before(now.Add(-time.Second)) {
			next = now // far behind: do not burst to catch up
		}
		w.one(w.day.Next(w.rng, w.region, phase), start, steady)
	}
}

// one sends req and records it.
func (w *worker) one(req Request, start time.Time, steady func(time.Duration) int) {
	key := req.Key()
	t0 := time.Now()
	var err error
	crossed, filled := false, false
	if req.Write {
		w.buf = appendSet(w.buf[:0], key, w.value)
		_, err = w.local.do(w.buf)
		if err == nil && len(w.remote) > 0 {
			// Full replication: the write invalidates (or replaces) the
			// other regions' copies before it counts as done, in parallel.
			crossed = true
			err = w.remoteWrite(key, w.cfg.FullWrites == FullSet)
			if err == nil && w.cfg.FullWrites == FullRefill {
				defer w.refill(key) // after the write is timed
			}
		}
	} else {
		var hit bool
		w.buf = appendGet(w.buf[:0], key)
		hit, err = w.local.do(w.buf)
		if err == nil && !hit {
			w.tally.misses++
			filled = true
			defer w.fill(key) // the read-through fill, after the read is timed
		}
	}
	d := time.Since(t0)
	t := w.tally
	t.requests++
	win := steady(t0.Sub(start)) // -1: outside every steady window
	sent := int64(1)
	if filled {
		sent = 2
	}
	t.sent += sent
	if win >= 0 {
		t.winSent[win] += sent
	}
	if crossed {
		t.remote++
		if win >= 0 {
			t.winRemote[win]++
		}
	}
	if err != nil {
		t.errors++
		if t.firstErr == nil {
			t.firstErr = err
		}
		return
	}
	us := d.Microseconds()
	_ = t.all.RecordValue(us)
	if win >= 0 {
		_ = t.steady.RecordValue(us)
	}
}

// remoteWrite deletes key in the other regions (or, with set, stores the
// value there) and waits for every reply.
func (w *worker) remoteWrite(key string, set bool) error {
	if set {
		w.buf = appendSet(w.buf[:0], key, w.value)
	} else {
		w.buf = appendDelete(w.buf[:0], key)
	}
	var first error
	sent := make([]bool, len(w.remote))
	for i, r := range w.remote {
		if err := r.send(w.buf); err != nil {
			first = cmpErr(first, err)
			continue
		}
		sent[i] = true
	}
	for i, r := range w.remote {
		if sent[i] {
			if _, err := r.reply(); err != nil {
				first = cmpErr(first, err)
			}
		}
	}
	return first
}

func cmpErr(first, err error) error {
	if first == nil {
		return err
	}
	return first
}

// refill caches the value a write invalidated in the other regions again
// (FullRefill). Its bytes cross regions like the invalidation's: the value
// has to reach every region that caches it.
func (w *worker) refill(key string) {
	if err := w.remoteWrite(key, true); err != nil {
		w.tally.errors++
		if w.tally.firstErr == nil {
			w.tally.firstErr = err
		}
	}
}

// fill stores the value a read missed, as an application that reads
// through the cache does.
func (w *worker) fill(key string) {
	w.buf = appendSet(w.buf[:0], key, w.value)
	if _, err := w.local.do(w.buf); err != nil {
		w.tally.errors++
		if w.tally.firstErr == nil {
			w.tally.firstErr = err
		}
	}
}

// value makes a value of n bytes; its content does not matter.
func value(n int) []byte {
	v := make([]byte, n)
	for i := range v {
		v[i] = 'a' + byte(i%26)
	}
	return v
}
