package admin

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/strata-cache/strata/control/admin/history"
)

// apiPrefix is the part of the URL space that needs the token.
const apiPrefix = "/admin/v1/"

// Server is the admin HTTP server. Its methods are safe for concurrent use.
type Server struct {
	cfg  Config
	deps Deps
	log  *slog.Logger

	// token is the bearer token in force; an empty slice means none.
	token atomic.Pointer[[]byte]

	reg    *prometheus.Registry
	routes map[string]map[string]http.HandlerFunc // path or pattern → method → handler
	// patterns are the keys of routes with a wildcard segment, sorted;
	// a request whose path is no key of routes is matched against them.
	patterns []string
	handler  http.Handler

	// hist is the page's time series, sampled from deps.Metrics from Start
	// to Stop; nil without Metrics.
	hist    *history.Recorder
	started time.Time
	// maint runs POST /admin/v1/servers/maintenance's walks.
	maint maintRunner

	mu      sync.Mutex // guards ln, srv and served
	ln      net.Listener
	srv     *http.Server
	served  chan struct{} // closed when Serve returned
	stopped bool
}

// New builds the server; it does not listen until Start. It refuses a
// non-loopback Listen without a token (ErrExposed).
func New(cfg Config, deps Deps) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.TLS && deps.TLS == nil {
		return nil, &ConfigError{Field: "TLS", Err: errors.New("HTTPS needs the memcached listener's certificate: set [tls] cert and key")}
	}
	s := &Server{cfg: cfg, deps: deps, log: cfg.Logger, started: time.Now()}
	tok := []byte(cfg.Token)
	s.token.Store(&tok)

	// The registry is the server's own: tests and embedders can run several
	// servers in one process, and nothing global is registered.
	s.reg = prometheus.NewRegistry()
	s.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	if deps.Metrics != nil {
		if deps.Clock == nil {
			return nil, errors.New("admin: Deps.Metrics without Deps.Clock, the clock the page's history samples it on")
		}
		s.reg.MustRegister(NewCollector(deps.Metrics))
		s.hist = history.NewRecorder(history.SourceFunc(func() history.Counters { return countersOf(deps.Metrics) }), history.Config{}, 0, deps.Clock, nil)
	}
	if deps.Tiers != nil {
		s.reg.MustRegister(newServerCollector(deps.Tiers))
	}
	if deps.HotKeys != nil {
		s.reg.MustRegister(newHotKeyCollector(deps.HotKeys))
	}
	s.routes = s.buildRoutes()
	for p := range s.routes {
		if isPattern(p) {
			s.patterns = append(s.patterns, p)
		}
	}
	sort.Strings(s.patterns)
	s.handler = http.HandlerFunc(s.serveHTTP)
	return s, nil
}

// Handler returns the server's HTTP handler, for embedding it elsewhere.
func (s *Server) Handler() http.Handler { return s.handler }

// Registry is the Prometheus registry /metrics serves.
func (s *Server) Registry() *prometheus.Registry { return s.reg }

// SetToken replaces the bearer token; "" removes it. It takes effect for
// the next request. Removing the token of a non-loopback listener is
// refused.
func (s *Server) SetToken(token string) error {
	if token == "" {
		host, _, _ := net.SplitHostPort(s.Addr())
		if !IsLoopback(host) {
			return fmt.Errorf("%w: %q", ErrExposed, s.Addr())
		}
	}
	tok := []byte(token)
	s.token.Store(&tok)
	return nil
}

// Start listens and serves in the background. It returns once the
// listener is bound, or with the reason it could not be.
func (s *Server) Start() error { return s.StartOn(nil) }

// StartOn is Start on a listening socket already bound (a predecessor's,
// handed over for an upgrade); nil binds Config.Listen. The server owns
// ln, and closes it on error.
func (s *Server) StartOn(ln net.Listener) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln != nil || s.stopped {
		if ln != nil {
			_ = ln.Close()
		}
		return errors.New("admin: already started")
	}
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", s.cfg.Listen); err != nil {
			return fmt.Errorf("admin: listen on %s: %w", s.cfg.Listen, err)
		}
	}
	s.ln = ln
	s.srv = &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	s.served = make(chan struct{})
	if s.hist != nil {
		s.hist.Start()
	}
	// s.ln stays the TCP listener: it is what a handoff duplicates.
	serve := ln
	if s.cfg.TLS {
		serve = tls.NewListener(ln, s.deps.TLS)
	}
	go func(srv *http.Server, done chan struct{}) {
		defer close(done)
		if err := srv.Serve(serve); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			s.log.Error("admin server stopped", "err", err)
		}
	}(s.srv, s.served)
	return nil
}

// Addr is the bound listen address once started (useful with port 0), or
// the configured one before.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln != nil {
		return s.ln.Addr().String()
	}
	return s.cfg.Listen
}

// Listener is the listening socket once started, nil before. It stays the
// server's: a caller may read or duplicate it (to hand it to a successor
// process), never close it.
func (s *Server) Listener() net.Listener {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ln
}

// StopAccepting closes the server's copy of its listening socket and goes
// on serving the connections it has, until Stop: after a handoff the
// successor answers new connections on the same socket, and a health check
// must not reach this process's drain.
func (s *Server) StopAccepting() {
	s.mu.Lock()
	ln := s.ln
	s.mu.Unlock()
	if ln != nil {
		_ = ln.Close()
	}
}

// Stop closes the listener and waits for requests in progress, within ctx
// or, if ctx has no deadline, Config.ShutdownTimeout. It is idempotent.
func (s *Server) Stop(ctx context.Context) error {
	s.mu.Lock()
	srv, served := s.srv, s.served
	s.stopped = true
	s.mu.Unlock()
	if s.hist != nil {
		s.hist.Stop()
	}
	// A walk in progress ends with the server; its steps are each one
	// store call, so it ends within ctx.
	_ = s.maint.halt(ctx, true)
	if srv == nil {
		return nil
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.ShutdownTimeout)
		defer cancel()
	}
	err := srv.Shutdown(ctx)
	if err != nil {
		_ = srv.Close()
	}
	<-served
	return err
}

func (s *Server) buildRoutes() map[string]map[string]http.HandlerFunc {
	r := map[string]map[string]http.HandlerFunc{
		"/":        {http.MethodGet: s.page},
		"/healthz": {http.MethodGet: s.healthz},
		"/readyz":  {http.MethodGet: s.readyz},
		"/metrics": {http.MethodGet: promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}).ServeHTTP},
	}
	if s.deps.Config != nil {
		r[apiPrefix+"config"] = map[string]http.HandlerFunc{http.MethodGet: s.getConfig}
	}
	if s.deps.Promotion != nil {
		r[apiPrefix+"promotion"] = map[string]http.HandlerFunc{http.MethodGet: s.getPromotion, http.MethodPut: s.putPromotion}
	}
	if s.deps.Sampler != nil {
		r[apiPrefix+"sampler"] = map[string]http.HandlerFunc{http.MethodGet: s.getSampler, http.MethodPut: s.putSampler}
		r[apiPrefix+"sampler/report"] = map[string]http.HandlerFunc{http.MethodGet: s.getSamplerReport}
	}
	if s.deps.Tiers != nil {
		r[apiPrefix+"tiers"] = map[string]http.HandlerFunc{http.MethodGet: s.getTiers}
	}
	if s.deps.Shards != nil {
		s.shardRoutes(r)
	}
	if s.deps.Locality != nil {
		s.localityRoutes(r)
	}
	if s.deps.HotKeys != nil {
		r[apiPrefix+"hotkeys"] = map[string]http.HandlerFunc{http.MethodGet: s.getHotKeys}
	}
	s.addPageRoutes(r)
	return r
}

// serveHTTP authenticates the API part of the URL space, then routes by
// path and method. Authentication comes first so that a caller without the
// token learns nothing, not even which paths exist.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.hostAllowed(r.Host) {
		writeError(w, http.StatusForbidden, "", "host "+strconv.Quote(r.Host)+" is not allowed without a token: use a loopback address, or list the name in admin.allowed_hosts")
		return
	}
	if mutating(r.Method) {
		if why := crossOrigin(r); why != "" {
			writeError(w, http.StatusForbidden, "", "refused: a page of another origin cannot change settings ("+why+")")
			return
		}
	}
	if strings.HasPrefix(r.URL.Path, apiPrefix) && !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="strata admin"`)
		writeError(w, http.StatusUnauthorized, "", "missing or wrong bearer token")
		return
	}
	methods, ok := s.routes[r.URL.Path]
	// A pattern is never a literal path: a request for ".../{id}" itself is
	// matched below, as an id spelt "{id}".
	if ok && isPattern(r.URL.Path) {
		ok = false
	}
	for _, p := range s.patterns {
		if ok {
			break
		}
		if matchPath(p, r.URL.EscapedPath(), r.SetPathValue) {
			methods, ok = s.routes[p]
		}
	}
	if !ok {
		writeError(w, http.StatusNotFound, "", "no such endpoint: "+r.URL.Path)
		return
	}
	h, ok := methods[r.Method]
	if !ok && r.Method == http.MethodHead {
		h, ok = methods[http.MethodGet]
	}
	if !ok {
		allowed := make([]string, 0, len(methods))
		for m := range methods {
			allowed = append(allowed, m)
		}
		sort.Strings(allowed)
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		writeError(w, http.StatusMethodNotAllowed, "", "method "+r.Method+" not allowed; use "+strings.Join(allowed, " or "))
		return
	}
	h(w, r)
}

// hostAllowed decides a request's Host header. With a token set every
// host passes (the token is what protects the API). Without one only
// loopback hosts and the configured names do, so a DNS-rebinding page
// cannot use a browser on this machine to read or change settings.
func (s *Server) hostAllowed(hostport string) bool {
	if len(*s.token.Load()) > 0 {
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if host == "" {
		// HTTP/1.0 without Host: no name a browser could have rebound.
		return true
	}
	if IsLoopback(host) {
		return true
	}
	for _, h := range s.cfg.AllowedHosts {
		if h == host {
			return true
		}
	}
	return false
}

// authorized compares the bearer token in constant time, so the time a
// wrong guess takes does not tell how much of it was right.
func (s *Server) authorized(r *http.Request) bool {
	want := *s.token.Load()
	if len(want) == 0 {
		return true
	}
	auth := r.Header.Get("Authorization")
	const scheme = "Bearer "
	if len(auth) < len(scheme) || !strings.EqualFold(auth[:len(scheme)], scheme) {
		return false
	}
	got := []byte(strings.TrimSpace(auth[len(scheme):]))
	return subtle.ConstantTimeCompare(got, want) == 1
}
