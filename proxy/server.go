package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	gerrors "github.com/panjf2000/gnet/v2/pkg/errors"

	"github.com/strata-cache/strata/internal/stall"
	"github.com/strata-cache/strata/internal/tlsconn"
	"github.com/strata-cache/strata/proxy/auth"
	"github.com/strata-cache/strata/proxy/protocol"
	"github.com/strata-cache/strata/sampler"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/memcached"
)

// Config is the data plane's configuration. The zero value of each field
// means its documented default.
type Config struct {
	// Listen is host:port of the memcached endpoint. Default 127.0.0.1:11211.
	Listen string
	// TLS, when it names a certificate, makes Listen a TLS listener
	// (tls.go). Default: plaintext.
	TLS tlsconn.Config
	// ListenPlain is host:port of a second, plaintext listener beside a
	// TLS one (memcached's notls:). Default: none.
	ListenPlain string
	// Loops is the number of gnet event loops. Default GOMAXPROCS. It
	// must agree with the loop handle New takes (NewLoops).
	Loops int
	// MergeLoops runs the loops on the first loop's thread while together
	// they are busy about one loop's worth or less, and splits them again
	// when it gets busy and splitting serves more (merge.go). On in
	// DefaultConfig; off, every loop keeps its own thread at any load.
	MergeLoops bool
	// Limits bound what one request may carry (item size, line length).
	Limits protocol.Limits
	// MaxInflight bounds requests parsed but not yet answered per
	// connection, and their keys (a multi-get counts one per key); past
	// it the connection is not read until replies drain. Default 1024.
	MaxInflight int
	// MaxOutboundBytes bounds the replies buffered, formatted or projected
	// for one connection; past it no further request of the connection is
	// parsed until its client has read half of them (see pause.go). A
	// paused client may leave up to MaxOutboundBytes plus one largest
	// request unparsed; one that sends more without reading is
	// disconnected. Default 4 MiB.
	MaxOutboundBytes int
	// Version is strata's own version, reported by stats as
	// strata_version. The version command and stats' version field answer
	// protocol.MemcachedVersion, the protocol strata speaks, because
	// clients and tools read it to pick features. Default "dev".
	Version string
	// Logger receives the data plane's rare events. Default slog.Default().
	Logger *slog.Logger
	// Auth makes every client connection authenticate first, as memcached
	// -Y and -S do (auth.go). The zero value requires nothing.
	Auth auth.Config
}

// validate fills the defaults of zero fields, then validates.
func (c *Config) validate() error {
	c.setDefaults()
	if err := c.Validate(); err != nil {
		return err
	}
	n, err := loopCount(c.Loops)
	if err != nil {
		return err
	}
	c.Loops = n
	return nil
}

// maxInbound is how many unparsed bytes a paused connection may leave in
// gnet's inbound buffer: its output bound plus one largest request (an item
// at the size limit, or a get line at the line limit), so that no request
// a client may send is refused for being paused.
func (c *Config) maxInbound() int {
	item, line := c.Limits.MaxItemSize, c.Limits.MaxLineLen
	if item <= 0 {
		item = protocol.DefaultMaxItemSize
	}
	if line <= 0 {
		line = protocol.DefaultMaxLineLen
	}
	return c.MaxOutboundBytes + max(item, line) + 16<<10
}

// Server is the memcached endpoint. Its methods are safe for concurrent use.
type Server struct {
	// auth holds the users clients authenticate against; nil without
	// Config.Auth.
	auth *auth.Users
	// authLog bounds the authentication failure log (auth.go).
	authLog logLimiter
	cfg     Config
	tier    tiers.Tier
	// users are what joined the loop handle (pools, the link client):
	// started once the engine booted, flushed once per loop round.
	users []memcached.User
	// async: some tier may answer after Do returns (the loops have
	// users), so requests of a connection are ordered by the tier's Phase
	// and the users are flushed once per loop round. Without users every
	// operation ends within Do, and neither has anything to do.
	async bool
	// merge runs the lightly loaded loops on one (merge.go); nil unless
	// Config.MergeLoops, and with one loop.
	merge *merger
	opts  options
	// peekMax is the most unread bytes a connection's callback looks at:
	// enough for the longest request the parser needs whole (a get line
	// of MaxLineLen, a storage line and an item of MaxItemSize), so that
	// a client that sent megabytes ahead (a long streamed multi-get) does
	// not make gnet copy all it buffered on every callback.
	peekMax int

	started  time.Time
	stats    stats
	stopOnce sync.Once
	draining atomic.Bool   // no new connections; idle ones close
	connSeq  atomic.Uint64 // numbers client connections (Op.Conn)

	// statsBase is the counters at the last "stats reset"; the stats
	// command shows what accumulated since. detail is "stats detail on".
	statsBase   atomic.Pointer[Counters]
	detail      atomic.Bool
	detailStats detailStats
	mu          sync.Mutex // guards loops, eng, running, acc, lacc, pacc
	loops       []*loopState
	eng         gnet.Engine
	running     bool
	acc         *acceptor  // the listener, once Start bound it
	lacc        *acceptor  // the region-link listener (WithLink), once Start bound it
	pacc        *acceptor  // the plaintext listener beside a TLS one (ListenPlain)
	done        chan error // the engine's result

	// tls is the client listener's certificate material (Config.TLS),
	// nil for plaintext; pending and handshakes are the TLS handshakes
	// under way, of clients and links (tls.go).
	tls        *tlsconn.Store
	linkTLS    tlsconn.Counts // the link listener's handshakes (WithLinkTLS)
	pending    handshaking
	handshakes sync.WaitGroup

	// ticking is closed by the first OnTick. gnet calls OnBoot before it
	// creates the event loops and starts the ticker after them, so the
	// first tick is the first moment a connection can be registered.
	ticking   chan struct{}
	firstTick sync.Once

	// stall is the process's stall detector (stall.go), held while
	// serving; tickGen is the generation the watcher last handed the loops.
	stall        *stall.Detector
	releaseStall func()
	tickGen      atomic.Uint64

	// The watcher (watch.go) owns the server's timed work; pauseWake
	// tells it a loop has a paused connection to check. stopWatch is a
	// no-op until Start starts it.
	pauseWake chan struct{}
	stopWatch func()

	// scav returns the garbage of a burst of accepts to the OS once the
	// burst is over (scavenge.go).
	scav *scavenger
}

// New builds a server over tier on loops, the handle the tiers were built
// with (NewLoops), and binds the handle to it: the users that joined it
// are the ones the server starts and flushes. It does not listen until
// Start.
func New(cfg Config, tier tiers.Tier, loops *Loops, opts ...Option) (*Server, error) {
	if tier == nil {
		return nil, errors.New("proxy: a tier is required")
	}
	if loops == nil {
		return nil, errors.New("proxy: the event loops (NewLoops) are required")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Loops != loops.NumLoops() {
		return nil, fieldErr("Loops", "%d differs from the loop handle's %d", cfg.Loops, loops.NumLoops())
	}
	s := &Server{cfg: cfg, tier: tier, ticking: make(chan struct{}), stall: stall.Process(), pauseWake: make(chan struct{}, 1), stopWatch: func() {}, scav: newScavenger()}
	if cfg.Auth.Enabled() {
		users, err := auth.New(cfg.Auth)
		if err != nil {
			return nil, &FieldError{Field: "Auth.UsersFile", Err: err}
		}
		s.auth = users
		s.cfg.Limits.Auth = users
	}
	pl := protocol.NewParser(cfg.Limits).Limits()
	s.peekMax = pl.MaxLineLen + pl.MaxItemSize + 64<<10
	s.stats.blocks = make([]loopCounters, cfg.Loops)
	for _, o := range opts {
		o(&s.opts)
	}
	if s.opts.link != "" {
		if _, _, err := net.SplitHostPort(s.opts.link); err != nil {
			return nil, fmt.Errorf("link listen address %q: %w", s.opts.link, err)
		}
	}
	if cfg.TLS.Enabled() {
		var err error
		if s.tls, err = tlsconn.NewStore(cfg.TLS); err != nil {
			return nil, err
		}
	}
	users, err := loops.bind(s)
	if err != nil {
		return nil, err
	}
	s.users, s.async = users, len(users) > 0
	if cfg.Loops > 1 && cfg.MergeLoops {
		s.merge = &merger{rule: defaultMergeRule}
	}
	return s, nil
}

// Stop closes the listener and every connection. It is idempotent and
// bounded by ctx.
func (s *Server) Stop(ctx context.Context) error {
	var err error
	s.stopOnce.Do(func() {
		s.mu.Lock()
		eng, running := s.eng, s.running
		s.mu.Unlock()
		if !running {
			return
		}
		s.closeListener()
		if e := eng.Stop(ctx); e != nil {
			err = e
		}
		select {
		case <-s.done:
		case <-ctx.Done():
			err = ctx.Err()
		}
		s.stopTLS(ctx)
		s.stopWatch()
		s.scav.stop()
		s.releaseStall()
	})
	return err
}

// Drain stops taking new connections, lets every request already received
// complete and its reply leave, closes each connection between requests
// (betweenRequests), and then stops the engine. A connection goes on being
// served until it is between requests, so a request that reached it is
// answered, never dropped; a client that sends its next one after the
// close meets a closed connection and may retry it elsewhere (a successor
// serving the same socket). Whatever is still pending when ctx ends is
// dropped with its connection.
func (s *Server) Drain(ctx context.Context) error {
	s.draining.Store(true)
	s.closeListener() // new clients go to a successor sharing the socket, or are refused
	// A connection may fall idle without a callback of its own (its last
	// reply leaving gnet's buffer), so the pass repeats until none is left.
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		s.drainPass(ctx)
		if s.stats.connsCurrent.Load() == 0 {
			break
		}
		select {
		case <-ctx.Done():
			_ = s.Stop(context.Background())
			return fmt.Errorf("drain: %d connections still open: %w", s.stats.connsCurrent.Load(), ctx.Err())
		case <-tick.C:
		}
	}
	return s.Stop(ctx)
}

// drainPass marks every client connection draining, on its own loop, and
// closes those between requests.
func (s *Server) drainPass(ctx context.Context) {
	s.mu.Lock()
	loops := append([]*loopState(nil), s.loops...)
	s.mu.Unlock()
	for _, l := range loops {
		l := l
		_ = l.el.Execute(ctx, gnet.RunnableFunc(func(context.Context) error {
			for cn := range l.conns {
				cn.draining = true
				if !cn.closed && cn.betweenRequests() {
					cn.closed = true
					_ = cn.c.Close()
				}
			}
			return nil
		}))
	}
}

// loopState is what one event loop owns. Only that loop's goroutine touches
// it, except idx and el, which never change after registration. While the
// loop is parked (merge.go), the host loop's goroutine runs it instead:
// one goroutine at a time, ordered by the hand-offs.
type loopState struct {
	idx   int
	el    gnet.EventLoop
	dirty []*conn // connections with completed replies to write
	// conns is the loop's open client connections, for Drain and stats
	// conns. The loop's goroutine writes it under connsMu and reads it
	// without; stats conns, from another loop, reads it under connsMu.
	// Each entry is the connection's only cost to stats conns.
	connsMu sync.Mutex
	conns   map[*conn]struct{}
	rec     sampler.Record // scratch for the sampler, reused per record

	// now is the monotonic time at the start of the current callback: one
	// clock read per callback serves the latency of every request in it.
	now int64

	flushPending bool // a tier flush is due at the end of this round (endRound)

	// paused lists connections stopped at a bound (pause.go); pausedN is
	// its length for the watcher, the one reader off the loop.
	paused    []*conn
	pausedN   atomic.Int32
	checkTask gnet.Runnable // runs checkPaused; bound once per loop

	// stallGen is the stall generation the loop last noticed, stallSeen
	// when (stall.go); stallTask runs the check for the watcher.
	stallGen  uint64
	stallSeen int64
	stallTask gnet.Runnable

	// slots, counts and works are what the loop's connections
	// gave back (slots.go): shared by the loop so that an idle connection
	// holds none of them, and taken back without allocating once the loop
	// is warm.
	slots  []*slot
	counts []*phaseCounts
	works  []*work
	// parse is the working memory of the loop's parsers, which run one at
	// a time on the loop's goroutine.
	parse protocol.Scratch
}

// loopFor returns the state of el, registering it on first sight. It runs
// only when a connection opens, never per request.
func (s *Server) loopFor(el gnet.EventLoop) *loopState {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.loops {
		if l.el == el {
			return l
		}
	}
	l := &loopState{idx: len(s.loops), el: el, conns: map[*conn]struct{}{}}
	l.checkTask = newCheckTask(l)
	l.stallTask = newStallTask(s, l)
	// A loop is registered by its first connection, possibly just after a
	// stall: it starts where the detector is, so that connection's bytes
	// are counted as the stall's (openedNearStall).
	l.stallGen, l.stallSeen = s.stall.Gen(nanotime()), s.stall.Ended()
	if s.async || (s.merge != nil && l.idx == 0) {
		if err := gnet.SetRoundEnd(el, func() { s.endRound(l) }); err != nil {
			// The carried gnet always has it (third_party/gnet/README.md).
			panic("proxy: gnet without SetRoundEnd: " + err.Error())
		}
	}
	s.loops = append(s.loops, l)
	return l
}

// RunOnLoop runs fn on event loop `loop`, later and asynchronously, then
// ends the callback as every callback ends (the replies fn completed are
// written). It drops fn when no connection ever opened on that loop (then
// nothing issued there can be waiting) or the engine is stopping. The
// tiers reach it through the loop handle (Loops.Run); it is safe from any
// goroutine.
func (s *Server) RunOnLoop(loop int, fn func()) {
	s.mu.Lock()
	var l *loopState
	if loop >= 0 && loop < len(s.loops) {
		l = s.loops[loop]
	}
	s.mu.Unlock()
	if l == nil {
		// No connection ever opened on that loop, so nothing issued there
		// can be waiting; the engine may also be stopping.
		return
	}
	if err := l.el.Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
		l.begin(s)
		fn()
		s.afterCallback(l)
		return nil
	})); err != nil && !errors.Is(err, gerrors.ErrEngineInShutdown) {
		s.cfg.Logger.Warn("run on event loop", "loop", loop, "err", err)
	}
}

// afterCallback ends every event-loop callback: it writes the client
// replies that completed and makes sure what the callback issued to the
// pools is sent. The pools' flush is not done here but once per round of
// the event loop, after every ready connection had its callback (endRound):
// requests of many clients then leave in one write per backend connection,
// which is most of a proxy's cost (a loopback write costs microseconds).
//
// A round that would write nothing is not marked: at depth 1 most
// callbacks that read a backend's replies only complete clients' requests
// (roundDue).
func (s *Server) afterCallback(l *loopState) {
	if s.async && !l.flushPending && s.roundDue(l.idx) {
		l.flushPending = true
	}
	s.flushDirty(l)
}

// endRound runs on the loop once the callbacks of a round (every event
// one epoll_wait returned, then the tasks queued to the loop) have run:
// gnet's round-end hook, which the carried gnet adds
// (third_party/gnet/README.md). A task queued with Execute would do the
// same at the cost of an eventfd write and one more epoll_wait per round
// (a third of a system call per request single-tier at depth 1). A loop
// that stops mid-round skips the flush: its backend connections close
// with it.
func (s *Server) endRound(l *loopState) {
	if l.flushPending {
		l.flushPending = false
		l.now = nanotime()
		s.flushPools(l.idx)
		s.flushDirty(l)
	}
	if s.merge != nil && l.idx == 0 {
		s.mergeTick(l, nanotime())
	}
}

// batchReporter is a loop user that can tell whether a flush round on a
// loop would do anything for it (memcached.Pool.Batched).
type batchReporter interface {
	Batched(loop int) bool
}

// roundDue reports whether a flush round on loop would do anything for
// some user. A user that cannot tell always gets its round.
func (s *Server) roundDue(loop int) bool {
	for _, u := range s.users {
		if b, ok := u.(batchReporter); !ok || b.Batched(loop) {
			return true
		}
	}
	return false
}

// flushPools writes what the loops' users (the pools, the link client)
// batched on loop during this round.
func (s *Server) flushPools(loop int) {
	for _, u := range s.users {
		u.FlushLoop(loop)
	}
}

// flushDirty writes the replies completed during the current callback.
func (s *Server) flushDirty(l *loopState) {
	for i, cn := range l.dirty {
		l.dirty[i] = nil
		if !cn.closed {
			cn.flush()
		}
	}
	l.dirty = l.dirty[:0]
}

// handler adapts gnet's callbacks to the server.
type handler struct {
	gnet.BuiltinEventEngine
	srv *Server
}

func (h *handler) OnBoot(eng gnet.Engine) gnet.Action {
	h.srv.mu.Lock()
	h.srv.eng = eng
	h.srv.mu.Unlock()
	return gnet.None
}

// backendEvents is the gnet context of a connection a tier dialled and
// enrolled on an event loop (see backend.go); its events go to the tier.
type backendEvents interface {
	onOpen(c gnet.Conn)
	onTraffic(c gnet.Conn)
	onClose(c gnet.Conn, err error)
	// owner is the state of the loop the connection was enrolled on.
	owner() *loopState
}

func (h *handler) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	s := h.srv
	if b, ok := c.Context().(backendEvents); ok {
		b.onOpen(c)
		return nil, gnet.None
	}
	_, link := c.Context().(linkMark)
	if m, ok := c.Context().(tlsMark); ok {
		c, link = s.tlsOpen(c, m), m.link
	}
	l := s.loopFor(c.EventLoop())
	cn := &conn{srv: s, c: c, loop: l, work: &parked, id: s.connSeq.Add(1), replyEst: s.cfg.MaxOutboundBytes / 4, link: link}
	if s.draining.Load() {
		return nil, gnet.Close
	}
	c.SetContext(cn)
	cn.loop.begin(s)
	cn.openedNearStall()
	cn.fd = int32(c.Fd())
	cn.lastCmd.Store(nanotime())
	l.connsMu.Lock()
	l.conns[cn] = struct{}{}
	l.connsMu.Unlock()
	s.stats.connOpened()
	return nil, gnet.None
}

func (h *handler) OnClose(c gnet.Conn, err error) gnet.Action {
	if b, ok := c.Context().(backendEvents); ok {
		b.onClose(c, err)
		return gnet.None
	}
	if cn, ok := c.Context().(*conn); ok {
		cn.park()
		cn.closed = true
		cn.loop.connsMu.Lock()
		delete(cn.loop.conns, cn)
		cn.loop.connsMu.Unlock()
		h.srv.stats.connClosed()
		h.srv.mu.Lock()
		as := [...]*acceptor{h.srv.acc, h.srv.lacc, h.srv.pacc}
		h.srv.mu.Unlock()
		for _, a := range as {
			if a != nil {
				a.connFreed()
			}
		}
	}
	return gnet.None
}

func (h *handler) OnTraffic(c gnet.Conn) gnet.Action {
	switch x := c.Context().(type) {
	case *conn:
		var a gnet.Action
		if w, ok := x.c.(*tlsGnetConn); ok {
			a = x.tlsTraffic(w)
		} else {
			a = x.traffic()
		}
		h.srv.afterCallback(x.loop)
		return a
	case backendEvents:
		x.owner().begin(h.srv)
		x.onTraffic(c)
		h.srv.afterCallback(x.owner())
	}
	return gnet.None
}

// OnTick only tells Start that the loops are up: the timed work is the
// watcher's (watch.go), which sleeps while there is none, so gnet's
// ticker is put off as long as a timer allows after its first tick.
func (h *handler) OnTick() (time.Duration, gnet.Action) {
	h.srv.firstTick.Do(func() { close(h.srv.ticking) })
	return math.MaxInt64, gnet.None
}
