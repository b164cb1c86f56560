package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	gerrors "github.com/panjf2000/gnet/v2/pkg/errors"

	"github.com/strata-cache/strata/proxy/protocol"
	"github.com/strata-cache/strata/sampler"
	"github.com/strata-cache/strata/tiers"
)

// Config is the data plane's configuration. The zero value of each field
// means its documented default.
type Config struct {
	// Listen is host:port of the memcached endpoint. Default 127.0.0.1:11211.
	Listen string
	// Loops is the number of gnet event loops. Default GOMAXPROCS.
	Loops int
	// Limits bound what one request may carry (item size, line length).
	Limits protocol.Limits
	// MaxInflight bounds requests parsed but not yet answered per
	// connection, and their keys (a multi-get counts one per key); past
	// it the connection is not read until replies drain. Default 1024.
	MaxInflight int
	// MaxOutboundBytes bounds replies buffered for a client that does not
	// read them; past it the connection is not read. Default 4 MiB.
	MaxOutboundBytes int
	// Version is what the version command reports after "VERSION ".
	Version string
	// Logger receives the data plane's rare events. Default slog.Default().
	Logger *slog.Logger
}

func (c *Config) validate() error {
	if c.Listen == "" {
		c.Listen = "127.0.0.1:11211"
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fmt.Errorf("listen address %q: %w", c.Listen, err)
	}
	if c.Loops < 0 {
		return fmt.Errorf("loops %d: must not be negative", c.Loops)
	}
	if c.Loops == 0 {
		c.Loops = runtime.GOMAXPROCS(0)
	}
	if c.MaxInflight == 0 {
		c.MaxInflight = 1024
	}
	if c.MaxInflight < 1 {
		return fmt.Errorf("max inflight %d: must be at least 1", c.MaxInflight)
	}
	if c.MaxOutboundBytes == 0 {
		c.MaxOutboundBytes = 4 << 20
	}
	if c.MaxOutboundBytes < 64<<10 {
		return fmt.Errorf("max outbound bytes %d: must be at least 64KiB", c.MaxOutboundBytes)
	}
	if c.Version == "" {
		c.Version = "1.6.18-strata"
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

// Server is the memcached endpoint. Its methods are safe for concurrent use.
type Server struct {
	cfg     Config
	tier    tiers.Tier
	flusher loopFlusher // the tier, when it batches backend writes; else nil
	phaser  phaser      // the tier, when requests must be ordered by phase; else nil
	opts    options
	// peekMax is the most unread bytes a connection's callback looks at:
	// enough for the longest request the parser needs whole (a get line
	// of MaxLineLen, a storage line and an item of MaxItemSize), so that
	// a client that sent megabytes ahead (a long streamed multi-get) does
	// not make gnet copy all it buffered on every callback.
	peekMax int

	started  time.Time
	stats    stats
	stopOnce sync.Once
	draining atomic.Bool // no new connections; idle ones close

	mu      sync.Mutex // guards loops, paused, eng, running
	loops   []*loopState
	paused  map[*conn]struct{}
	eng     gnet.Engine
	running bool
	done    chan error // Run's result

	booted chan struct{}
}

// Option adjusts a Server beyond its Config.
type Option func(*options)

type options struct {
	statsFunc func(dst []byte, args [][]byte) []byte
	onStart   []func(*Server) // run once the engine booted, before Start returns
	sampler   Sampler
}

// WithStats adds lines to the stats command: f appends "STAT name value\r\n"
// lines for the given arguments (none for plain stats).
func WithStats(f func(dst []byte, args [][]byte) []byte) Option {
	return func(o *options) { o.statsFunc = f }
}

// New builds a server over tier. It does not listen until Start.
func New(cfg Config, tier tiers.Tier, opts ...Option) (*Server, error) {
	if tier == nil {
		return nil, errors.New("proxy: a tier is required")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, tier: tier, flusher: flusherOf(tier), paused: map[*conn]struct{}{}, booted: make(chan struct{})}
	s.phaser, _ = tier.(phaser)
	pl := protocol.NewParser(cfg.Limits).Limits()
	s.peekMax = pl.MaxLineLen + pl.MaxItemSize + 64<<10
	s.stats.blocks = make([]loopCounters, maxLoops)
	for _, o := range opts {
		o(&s.opts)
	}
	return s, nil
}

// Start listens and serves in the background; it returns once the listener
// accepts connections, or with the reason it could not.
func (s *Server) Start() error {
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return errors.New("proxy: already started")
	}
	s.running = true
	s.done = make(chan error, 1)
	s.mu.Unlock()
	s.started = time.Now()
	h := &handler{srv: s}
	go func() {
		s.done <- gnet.Run(h, "tcp://"+s.cfg.Listen,
			gnet.WithNumEventLoop(s.cfg.Loops),
			gnet.WithMulticore(true),
			gnet.WithReusePort(false),
			gnet.WithTCPNoDelay(gnet.TCPNoDelay),
			gnet.WithTicker(true),
			gnet.WithLoadBalancing(gnet.LeastConnections),
			gnet.WithLogger(gnetLogger{s.cfg.Logger}),
		)
	}()
	select {
	case <-s.booted:
		// A tier that resumes work on a given loop (the layered tier's
		// delayed writes) gets the loops now.
		if x, ok := s.tier.(interface {
			SetExecutor(func(loop int, fn func()))
		}); ok {
			x.SetExecutor(s.runOnLoop)
		}
		for _, f := range s.opts.onStart {
			f(s)
		}
		return nil
	case err := <-s.done:
		if err == nil {
			err = errors.New("engine stopped before booting")
		}
		return fmt.Errorf("proxy: listen on %s: %w", s.cfg.Listen, err)
	}
}

// Addr is the listen address.
func (s *Server) Addr() string { return s.cfg.Listen }

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
		if e := eng.Stop(ctx); e != nil {
			err = e
		}
		select {
		case <-s.done:
		case <-ctx.Done():
			err = ctx.Err()
		}
	})
	return err
}

// Drain stops taking new connections and requests, lets every request
// already received complete and its reply leave, closes each connection once
// it is idle, and then stops the engine. Whatever is still pending when ctx
// ends is dropped with its connection.
func (s *Server) Drain(ctx context.Context) error {
	s.draining.Store(true)
	s.mu.Lock()
	loops := append([]*loopState(nil), s.loops...)
	s.mu.Unlock()
	for _, l := range loops {
		l := l
		_ = l.el.Execute(ctx, gnet.RunnableFunc(func(context.Context) error {
			for cn := range l.conns {
				cn.closing = true
				if len(cn.queue) == 0 {
					cn.closed = true
					_ = cn.c.Close()
				}
			}
			return nil
		}))
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for s.stats.connsCurrent.Load() > 0 {
		select {
		case <-ctx.Done():
			_ = s.Stop(context.Background())
			return fmt.Errorf("drain: %d connections still open: %w", s.stats.connsCurrent.Load(), ctx.Err())
		case <-tick.C:
		}
	}
	return s.Stop(ctx)
}

// loopState is what one event loop owns. Only that loop's goroutine touches
// it, except idx and el, which never change after registration.
type loopState struct {
	idx   int
	el    gnet.EventLoop
	dirty []*conn            // connections with completed replies to write
	conns map[*conn]struct{} // open client connections, for Drain
	rec   sampler.Record     // scratch for the sampler, reused per record

	// now is the monotonic time at the start of the current callback: one
	// clock read per callback serves the latency of every request in it.
	now int64

	flushPending bool          // a tier flush is queued for the end of this round
	flushTask    gnet.Runnable // runs the tier flush; bound once per loop
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
	s.loops = append(s.loops, l)
	return l
}

func (s *Server) runOnLoop(loop int, fn func()) {
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
		l.now = nanotime()
		fn()
		s.afterCallback(l)
		return nil
	})); err != nil && !errors.Is(err, gerrors.ErrEngineInShutdown) {
		s.cfg.Logger.Warn("run on event loop", "loop", loop, "err", err)
	}
}

// afterCallback ends every event-loop callback: it writes the client
// replies that completed and makes sure what the callback issued to a
// batching tier is sent. The tier's flush is not done here but once per
// round of the event loop, after every ready connection had its callback:
// requests of many clients then leave in one write per backend connection,
// which is most of a proxy's cost (a loopback write costs microseconds).
func (s *Server) afterCallback(l *loopState) {
	if f := s.flusher; f != nil && !l.flushPending {
		l.flushPending = true
		if l.flushTask == nil {
			l.flushTask = gnet.RunnableFunc(func(context.Context) error {
				l.flushPending = false
				l.now = nanotime()
				f.FlushLoop(l.idx)
				s.flushDirty(l)
				return nil
			})
		}
		if err := l.el.Execute(context.Background(), l.flushTask); err != nil {
			// The engine is stopping: flush now rather than never.
			l.flushPending = false
			f.FlushLoop(l.idx)
		}
	}
	s.flushDirty(l)
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

// pause records a connection that stopped reading at a bound; the ticker
// wakes it to try again.
func (s *Server) pause(cn *conn) {
	s.mu.Lock()
	s.paused[cn] = struct{}{}
	s.mu.Unlock()
}

func (s *Server) wakePaused() {
	s.mu.Lock()
	var list []*conn
	for cn := range s.paused {
		list = append(list, cn)
		delete(s.paused, cn)
	}
	s.mu.Unlock()
	for _, cn := range list {
		_ = cn.c.Wake(nil)
	}
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
	close(h.srv.booted)
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

// loopFlusher is implemented by tiers that batch backend writes: the proxy
// calls FlushLoop once per round of an event loop that issued requests, so
// requests issued during the round leave in one write per backend
// connection.
type loopFlusher interface {
	FlushLoop(loop int)
}

// batchingTier lets a tier that implements FlushLoop for tiers below it
// say whether any of them batches (the layering over embedded stores does
// not), so the proxy does not schedule flushes that do nothing.
type batchingTier interface {
	Batches() bool
}

func flusherOf(t tiers.Tier) loopFlusher {
	f, ok := t.(loopFlusher)
	if !ok {
		return nil
	}
	if b, ok := t.(batchingTier); ok && !b.Batches() {
		return nil
	}
	return f
}

func (h *handler) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	s := h.srv
	if b, ok := c.Context().(backendEvents); ok {
		b.onOpen(c)
		return nil, gnet.None
	}
	cn := &conn{srv: s, c: c, loop: s.loopFor(c.EventLoop()), parser: protocol.NewParser(s.cfg.Limits)}
	if s.draining.Load() {
		return nil, gnet.Close
	}
	c.SetContext(cn)
	cn.loop.conns[cn] = struct{}{}
	s.stats.connOpened()
	return nil, gnet.None
}

func (h *handler) OnClose(c gnet.Conn, err error) gnet.Action {
	if b, ok := c.Context().(backendEvents); ok {
		b.onClose(c, err)
		return gnet.None
	}
	if cn, ok := c.Context().(*conn); ok {
		cn.closed = true
		delete(cn.loop.conns, cn)
		h.srv.stats.connClosed()
		h.srv.mu.Lock()
		delete(h.srv.paused, cn)
		h.srv.mu.Unlock()
	}
	return gnet.None
}

func (h *handler) OnTraffic(c gnet.Conn) gnet.Action {
	switch x := c.Context().(type) {
	case *conn:
		a := x.traffic()
		h.srv.afterCallback(x.loop)
		return a
	case backendEvents:
		x.owner().now = nanotime()
		x.onTraffic(c)
		h.srv.afterCallback(x.owner())
	}
	return gnet.None
}

func (h *handler) OnTick() (time.Duration, gnet.Action) {
	h.srv.wakePaused()
	return 10 * time.Millisecond, gnet.None
}

// gnetLogger routes gnet's own log lines into slog.
type gnetLogger struct{ l *slog.Logger }

func (g gnetLogger) Debugf(f string, a ...any) { g.l.Debug(fmt.Sprintf(f, a...), "component", "gnet") }
func (g gnetLogger) Infof(f string, a ...any)  { g.l.Debug(fmt.Sprintf(f, a...), "component", "gnet") }
func (g gnetLogger) Warnf(f string, a ...any)  { g.l.Warn(fmt.Sprintf(f, a...), "component", "gnet") }
func (g gnetLogger) Errorf(f string, a ...any) { g.l.Error(fmt.Sprintf(f, a...), "component", "gnet") }
func (g gnetLogger) Fatalf(f string, a ...any) { g.l.Error(fmt.Sprintf(f, a...), "component", "gnet") }
