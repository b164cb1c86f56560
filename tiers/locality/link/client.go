package link

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-cache/strata/internal/stall"
	"github.com/strata-cache/strata/internal/tlsconn"
	"github.com/strata-cache/strata/proxy/protocol"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/internal/tickclock"
	"github.com/strata-cache/strata/tiers/locality/linkproto"
	"github.com/strata-cache/strata/tiers/memcached"
	"github.com/strata-cache/strata/tiers/memcached/metacodec"
)

// Errors a forwarded Op can complete with (besides linkproto.ErrWrongOwner
// and the peer's own SERVER_ERROR lines). All but ErrRequest wrap
// ErrUnreachable: the peer may not have seen the request, or may have
// applied it.
var (
	ErrUnreachable = errors.New("link: peer region unreachable")
	ErrTimeout     = fmt.Errorf("%w: timed out", ErrUnreachable)
	ErrBacklog     = fmt.Errorf("%w: too many requests queued", ErrUnreachable)
	ErrClosed      = fmt.Errorf("%w: link client closed", ErrUnreachable)
	ErrNotStarted  = fmt.Errorf("%w: link client not started", ErrUnreachable)
	// ErrRequest: the request cannot be spelt on a link (a key too long).
	ErrRequest = errors.New("link: request not expressible")
)

// Client holds the connections to every peer region, one per event loop.
// Send and FlushLoop run on event loops; the other methods are safe from
// any goroutine.
type Client struct {
	cfg     Config
	regions []string // peer names, sorted: a peer's index is its place here
	addrs   []string

	loops   memcached.Loops // from New, which joins it: it starts and flushes the client
	lstates []*loopState    // set by Start, read-only after
	started atomic.Bool

	clock  *tickclock.Clock  // ms, advanced by the ticker while it ticks
	ticker *tickclock.Ticker // sleeps while every loop is quiet; the loops wake it

	// stall is the process's stall detector (stall.go), held from Start
	// to Close; release ends that hold.
	stall   *stall.Detector
	release func()

	mu     sync.Mutex // guards closed and serialises Start and Close
	closed bool
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // the ticker and the diallers

	handshakes tlsconn.Counts // with the peers, when Config.TLS is set
}

// loopState is what one event loop owns.
type loopState struct {
	idx int
	// conns holds two connections per peer: forwarded requests at the
	// peer's index, source reads and deletes at len(regions) + index
	// (see Send).
	conns []*pconn
	dirty []*pconn
	spare []*pconn
	check func()
	abort func()
	ctr   counters
	// waiting: some request may wait for a reply on this loop, or a
	// connection wait out a backoff on the client clock. The loop sets it
	// when it queues one and clears it in a check that finds every queue
	// empty and no backoff running; the ticker reads it to leave a quiet
	// loop asleep, and sleeps itself when every loop is quiet.
	waiting atomic.Bool
	ticker  *tickclock.Ticker // the client's
	// stallGen is the stall generation as of the loop's newest flush
	// round (stall.go).
	stallGen uint64
}

// counters are one loop's share of the client's counters.
type counters struct {
	requests, errors, timeouts, wrongOwner atomic.Uint64
	bytesOut, bytesIn, writes, held        atomic.Uint64
	_                                      [64]byte
}

// Stats are the client's counters since New.
type Stats struct {
	Requests   uint64 // forwarded requests sent (or failed before sending)
	Errors     uint64 // completed with an error of any kind
	Timeouts   uint64
	WrongOwner uint64 // refused by the peer as not its μ-shard
	// BytesOut and BytesIn are the link's traffic: requests written and
	// replies read.
	BytesOut, BytesIn uint64
	// Writes: batches written; Requests/Writes is the batching factor.
	Writes uint64
	// Held counts writes queued but not yet sent at a process stall,
	// failed rather than sent after it (stall.go); they count in Errors.
	Held uint64
}

// New builds a client on loops and joins it (memcached.Loops.Join), so
// that whoever serves the loops starts the client and flushes it; loops
// is required. It connects nothing before Start and first use.
func New(cfg Config, loops memcached.Loops) (*Client, error) {
	if loops == nil {
		return nil, errors.New("link: the event loops are required")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, loops: loops, stall: stall.Process()}
	// A stop of the process counts as at most half a timeout
	// (tickclock's doc says why).
	c.clock = tickclock.New(time.Now(), max(cfg.Timeout/2, c.tick()))
	c.ticker = tickclock.NewTicker(c.clock, c.tick())
	for r := range cfg.Peers {
		c.regions = append(c.regions, r)
	}
	sort.Strings(c.regions)
	for _, r := range c.regions {
		c.addrs = append(c.addrs, cfg.Peers[r])
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	if err := loops.Join(c); err != nil {
		c.cancel()
		return nil, err
	}
	return c, nil
}

var _ memcached.User = (*Client)(nil)

// Peer returns the index of region for Send, or -1 when it is not a peer.
func (c *Client) Peer(region string) int {
	for i, r := range c.regions {
		if r == region {
			return i
		}
	}
	return -1
}

// Regions lists the peers by index.
func (c *Client) Regions() []string { return append([]string(nil), c.regions...) }

// Start sizes the per-loop state and starts the ticker; the loops the
// client joined call it once they serve (memcached.User). Calls after the
// first, or after Close, do nothing.
func (c *Client) Start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started.Load() || c.closed {
		return
	}
	n := max(c.loops.NumLoops(), 1)
	c.lstates = make([]*loopState, n)
	c.release = c.stall.Hold()
	gen := c.stall.Gen(stall.Now())
	for i := range c.lstates {
		ls := &loopState{idx: i, stallGen: gen, ticker: c.ticker}
		for range 2 { // forwards, then source requests
			for p := range c.regions {
				ls.conns = append(ls.conns, &pconn{c: c, ls: ls, peer: p})
			}
		}
		ls.check = func() { c.checkLoop(ls) }
		ls.abort = func() {
			for _, pc := range ls.conns {
				pc.reset(ErrClosed)
			}
		}
		c.lstates[i] = ls
	}
	c.started.Store(true)
	c.wg.Add(1)
	go c.runTicker()
}

// Close stops the ticker and the diallers and fails what is queued (on
// each loop, through Loops.Run). It is idempotent.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.cancel()
	started := c.started.Load()
	c.mu.Unlock()
	if started {
		for i, ls := range c.lstates {
			c.loops.Run(i, ls.abort)
		}
		c.release()
	}
	c.wg.Wait()
	return nil
}

// goroutine runs fn on a goroutine Close waits for; false once closed.
func (c *Client) goroutine(fn func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		fn()
	}()
	return true
}

// tick is how often the clock advances and timeouts are checked: a tenth
// of the timeout, within 1ms..100ms, so a timeout fires at most 10% late.
func (c *Client) tick() time.Duration {
	return min(max(c.cfg.Timeout/10, time.Millisecond), 100*time.Millisecond)
}

// runTicker runs the timeout check on every loop that may hold a
// request, on each tick of the client clock; with none, the ticker sleeps
// until a loop queues one (noteWaiting), and no backoff runs on the clock
// meanwhile (checkLoop).
func (c *Client) runTicker() {
	defer c.wg.Done()
	c.ticker.Run(c.ctx, func() bool {
		checked := false
		for i, ls := range c.lstates {
			if ls.waiting.Load() {
				c.loops.Run(i, ls.check)
				checked = true
			}
		}
		return checked
	})
}

// Send forwards op to peer with tok, on op.Loop. Done is called on that
// loop, possibly before Send returns (the peer is in back-off, or its
// queue is full).
//
// Source requests (tok.Source) take a connection of their own. The peer
// answers a connection's requests in order, and a forwarded request may
// wait there for the peer's own source request back to us; a source
// request of ours queued behind it on one connection would then wait for
// it, and when both regions do this at once neither answers until the
// timeout. A source request is served from the peer's local tiers and
// waits for no region, so on a connection of their own they always
// complete, and so does what waits for them.
func (c *Client) Send(peer int, op *tiers.Op, tok linkproto.Token) {
	if !c.started.Load() || op.Loop < 0 || op.Loop >= len(c.lstates) || peer < 0 || peer >= len(c.regions) {
		complete(op, ErrNotStarted)
		return
	}
	if tok.Source {
		peer += len(c.regions)
	}
	c.lstates[op.Loop].conns[peer].submit(op, tok)
}

// FlushLoop writes the requests loop batched during this round
// (memcached.User).
func (c *Client) FlushLoop(loop int) {
	if !c.started.Load() || loop < 0 || loop >= len(c.lstates) {
		return
	}
	ls := c.lstates[loop]
	ls.stallGen = c.stall.Gen(stall.Now())
	for len(ls.dirty) > 0 {
		batch := ls.dirty
		ls.dirty = ls.spare[:0]
		for i, pc := range batch {
			batch[i] = nil
			pc.flush()
		}
		ls.spare = batch[:0]
	}
}

// checkLoop fails the requests that waited past the timeout, on one loop.
func (c *Client) checkLoop(ls *loopState) {
	now, limit := c.clock.Load(), c.cfg.Timeout.Milliseconds()
	quiet := true
	for _, pc := range ls.conns {
		if pc.q.Len() > 0 && now-pc.q.Front().issued > limit {
			ls.ctr.timeouts.Add(uint64(pc.q.Len()))
			pc.reset(fmt.Errorf("%w: peer %s after %v", ErrTimeout, c.regions[pc.peer], c.cfg.Timeout))
		}
		// A backoff ends on the client clock, which stops while the
		// loops are quiet.
		quiet = quiet && pc.q.Len() == 0 && !tickclock.BackingOff(pc.state == stateBackoff, pc.retryAt, now)
	}
	if quiet {
		ls.waiting.Store(false)
	}
}

// noteWaiting marks the loop as having a request to time; one load per
// request, a store and a wake of the ticker only on the first after a
// quiet check.
func (ls *loopState) noteWaiting() {
	if !ls.waiting.Load() {
		ls.waiting.Store(true)
		ls.ticker.Wake()
	}
}

// Stats sums the counters of every loop.
func (c *Client) Stats() Stats {
	var s Stats
	if !c.started.Load() {
		return s
	}
	for _, ls := range c.lstates {
		s.Requests += ls.ctr.requests.Load()
		s.Errors += ls.ctr.errors.Load()
		s.Timeouts += ls.ctr.timeouts.Load()
		s.WrongOwner += ls.ctr.wrongOwner.Load()
		s.BytesOut += ls.ctr.bytesOut.Load()
		s.BytesIn += ls.ctr.bytesIn.Load()
		s.Writes += ls.ctr.writes.Load()
		s.Held += ls.ctr.held.Load()
	}
	return s
}

// TLSHandshakes reads the counts of the handshakes with the peers' link
// listeners; ok is false without TLS.
func (c *Client) TLSHandshakes() (t tlsconn.Tally, ok bool) {
	if c.cfg.TLS == nil {
		return t, false
	}
	return c.handshakes.Read(), true
}

// AppendStats appends the client's line of the stats command: the writes
// failed rather than sent after a process stall, beside the proxy's
// strata_stall_refused_writes and the pools' stall_held.
func (c *Client) AppendStats(dst []byte) []byte {
	return protocol.AppendStatUint(dst, "strata_link_stall_held", c.Stats().Held)
}

// dial connects to the peer on a goroutine and enrols the connection on
// the loop; the loop learns a failure through Run.
func (c *Client) dial(pc *pconn, h *handler) bool {
	loop, addr := pc.ls.idx, c.addrs[pc.peer]
	return c.goroutine(func() {
		ctx, cancel := context.WithTimeout(c.ctx, c.cfg.Timeout)
		defer cancel()
		nc, err := c.connect(ctx, addr)
		if err == nil {
			err = c.loops.Attach(ctx, loop, nc, h)
		}
		if err != nil {
			c.loops.Run(loop, func() { pc.dialFailed(h, err) })
		}
	})
}

// connect dials addr, and with TLS configured handshakes on this
// goroutine and hands the loop the socket with its session (tlsconn), whose
// records the loop then processes.
func (c *Client) connect(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil || c.cfg.TLS == nil {
		return nc, err
	}
	timeout := time.Minute
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	s, err := tlsconn.Client(nc, tlsconn.ForAddr(c.cfg.TLS, addr), timeout)
	c.handshakes.Count(err, false)
	if err != nil {
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	return &tlsconn.Handoff{Conn: nc, Session: s}, nil
}

// complete finishes op with an error decided without a reply.
func complete(op *tiers.Op, err error) {
	op.Res.Reset()
	op.Res.Status = tiers.StatusError
	op.Res.Err = err
	if op.Done != nil {
		op.Done(op)
	}
}

// errFromReply is the Result.Err of a reply line that has no status.
func errFromReply(region string, err error) error {
	var re *metacodec.ReplyError
	if errors.As(err, &re) && re.Code == metacodec.CodeServerError && linkproto.IsWrongOwner([]byte(re.Text)) {
		return linkproto.ErrWrongOwner
	}
	return fmt.Errorf("link: peer %s replied %w", region, err)
}
