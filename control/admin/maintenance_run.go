package admin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// MaintenanceRequest is the body of POST /admin/v1/servers/maintenance:
// Addr of Tier, or with All every server of Tier one at a time.
type MaintenanceRequest struct {
	Tier string `json:"tier"`
	Addr string `json:"addr,omitempty"`
	All  bool   `json:"all,omitempty"`
	// Interval is how often the walk reads the shard map: 1ms to 1m,
	// default 1s.
	Interval Duration `json:"interval,omitempty"`
}

// Bounds and default of MaintenanceRequest.Interval.
const (
	DefaultMaintenanceInterval = time.Second
	minMaintenanceInterval     = time.Millisecond
	maxMaintenanceInterval     = time.Minute
)

// MaintenanceStatus is the body of GET /admin/v1/servers/maintenance, and
// the reply to POST (202) and DELETE: the walk in progress or the last
// one, the zero value before any.
type MaintenanceStatus struct {
	Tier string `json:"tier,omitempty"`
	// Servers are the servers walked, in order; Server is the index of the
	// one in maintenance (the last one reached once the walk ended), Addr
	// its address and Step its step ("emptying", "waiting for it to be
	// stopped", …, "done").
	Servers []string `json:"servers,omitempty"`
	Server  int      `json:"server"`
	Addr    string   `json:"addr,omitempty"`
	Step    string   `json:"step,omitempty"`
	Running bool     `json:"running"`
	// Error is why a walk that ended did not finish ("" if it did).
	Error   string    `json:"error,omitempty"`
	Started time.Time `json:"started"`
	// Notes are the walk's lines for the operator, the last maxNotes of
	// them, numbered from 1 so that a reader polling shows each once.
	Notes []MaintenanceNote `json:"notes,omitempty"`
}

// MaintenanceNote is one line of a walk.
type MaintenanceNote struct {
	Seq  int       `json:"seq"`
	At   time.Time `json:"at"`
	Line string    `json:"line"`
}

// maxNotes bounds the notes a status keeps: a walk of a large pool
// writes some seven per server.
const maxNotes = 64

// errBusy refuses a walk while another runs: two would drain two servers
// at once, which is what a rolling restart avoids.
var errBusy = errors.New("a maintenance walk is already running: wait for it or cancel it (DELETE)")

// maintRunner runs at most one maintenance walk at a time, on a goroutine
// it owns; stop cancels it and waits for that goroutine.
type maintRunner struct {
	mu      sync.Mutex // guards every field below
	status  MaintenanceStatus
	seq     int
	cancel  context.CancelFunc
	done    chan struct{} // closed when the walk's goroutine returned; nil before any
	stopped bool
}

// start begins walking addrs of tier on a new goroutine, or refuses with
// errBusy.
func (r *maintRunner) start(c ShardControl, pidOf PIDFunc, log *slog.Logger, tier string, addrs []string, interval time.Duration) (MaintenanceStatus, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return r.snapshotLocked(), errors.New("the admin server is stopping")
	}
	if r.status.Running {
		return r.snapshotLocked(), errBusy
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	r.status = MaintenanceStatus{Tier: tier, Servers: addrs, Addr: addrs[0], Step: mDrain.String(), Running: true, Started: time.Now()}
	r.cancel, r.done = cancel, done
	go func() {
		defer close(done)
		defer cancel()
		err := r.walk(ctx, c, pidOf, log, tier, addrs, interval)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.status.Running = false
		if err != nil {
			r.status.Error = err.Error()
			r.noteLocked("stopped: " + err.Error())
			log.Warn("admin maintenance", "tier", tier, "addr", r.status.Addr, "err", err)
		}
	}()
	return r.snapshotLocked(), nil
}

// walk takes each of addrs through maintenance in turn.
func (r *maintRunner) walk(ctx context.Context, c ShardControl, pidOf PIDFunc, log *slog.Logger, tier string, addrs []string, interval time.Duration) error {
	for i, a := range addrs {
		r.mu.Lock()
		r.status.Server, r.status.Addr, r.status.Step = i, a, mDrain.String()
		if len(addrs) > 1 {
			r.noteLocked(fmt.Sprintf("server %d of %d", i+1, len(addrs)))
		}
		r.mu.Unlock()
		err := maintain(ctx, c, pidOf, tier, a, interval, func(p maintPhase, line string) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.status.Step = p.String()
			if line != "" {
				r.noteLocked(line)
				log.Info("admin maintenance", "tier", tier, "addr", a, "step", p.String(), "note", line)
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// noteLocked adds a line to the status.
func (r *maintRunner) noteLocked(line string) {
	r.seq++
	r.status.Notes = append(r.status.Notes, MaintenanceNote{Seq: r.seq, At: time.Now(), Line: line})
	if n := len(r.status.Notes); n > maxNotes {
		r.status.Notes = append([]MaintenanceNote(nil), r.status.Notes[n-maxNotes:]...)
	}
}

// snapshotLocked is a copy of the status its caller may keep.
func (r *maintRunner) snapshotLocked() MaintenanceStatus {
	st := r.status
	st.Servers = append([]string(nil), st.Servers...)
	st.Notes = append([]MaintenanceNote(nil), st.Notes...)
	return st
}

func (r *maintRunner) snapshot() MaintenanceStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.snapshotLocked()
}

// halt cancels the walk in progress, if any, and waits for its goroutine
// within ctx; stopping also refuses later walks. A walk cancelled leaves
// the server where it was (drained, perhaps): the operator undrains it.
func (r *maintRunner) halt(ctx context.Context, stopping bool) error {
	r.mu.Lock()
	r.stopped = r.stopped || stopping
	cancel, done := r.cancel, r.done
	r.mu.Unlock()
	if done == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Server) postMaintenance(w http.ResponseWriter, r *http.Request) {
	var req MaintenanceRequest
	if !decodeBody(w, r, &req) {
		return
	}
	interval := time.Duration(req.Interval)
	if interval == 0 {
		interval = DefaultMaintenanceInterval
	}
	switch {
	case req.Tier == "":
		writeError(w, http.StatusBadRequest, "tier", "missing")
		return
	case req.Addr == "" && !req.All:
		writeError(w, http.StatusBadRequest, "addr", "missing: name a server, or set all")
		return
	case req.Addr != "" && req.All:
		writeError(w, http.StatusBadRequest, "addr", "one server or all of them, not both")
		return
	case interval < minMaintenanceInterval || interval > maxMaintenanceInterval:
		writeError(w, http.StatusBadRequest, "interval", fmt.Sprintf("%v: want %v to %v", interval, minMaintenanceInterval, maxMaintenanceInterval))
		return
	}
	m, err := s.deps.Shards.ShardMap(r.Context(), req.Tier)
	if err != nil {
		writeShardErr(w, err)
		return
	}
	addrs, err := walkOf(m, req.Addr, req.All)
	var fe *FieldError
	switch {
	case errors.As(err, &fe) && fe.Field == "addr":
		writeError(w, http.StatusBadRequest, fe.Field, fe.Err.Error())
		return
	case errors.As(err, &fe):
		writeError(w, http.StatusConflict, fe.Field, fe.Err.Error())
		return
	}
	// The restart is seen by the server's process id: one that does not
	// answer now could not be seen restarting.
	if s.pidOf(r.Context(), addrs[0]) == 0 {
		writeError(w, http.StatusConflict, "addr", addrs[0]+" does not answer stats: its restart could not be seen")
		return
	}
	st, err := s.maint.start(s.deps.Shards, s.pidOf, s.log, req.Tier, addrs, interval)
	if err != nil {
		writeError(w, http.StatusConflict, "", err.Error())
		return
	}
	s.log.Info("admin maintenance started", "tier", req.Tier, "servers", addrs)
	writeJSON(w, http.StatusAccepted, st)
}

func (s *Server) getMaintenance(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.maint.snapshot())
}

func (s *Server) deleteMaintenance(w http.ResponseWriter, r *http.Request) {
	if err := s.maint.halt(r.Context(), false); err != nil {
		writeError(w, http.StatusServiceUnavailable, "", err.Error())
		return
	}
	s.log.Info("admin maintenance cancelled")
	writeJSON(w, http.StatusOK, s.maint.snapshot())
}

// pidOf is Deps.ServerPID, or memcached's own stats without one.
func (s *Server) pidOf(ctx context.Context, addr string) int {
	if s.deps.ServerPID != nil {
		return s.deps.ServerPID(ctx, addr)
	}
	return MemcachedPID(ctx, addr)
}

// StartMaintenance starts a maintenance walk; the reply is its status.
func (c *Client) StartMaintenance(ctx context.Context, req MaintenanceRequest) (MaintenanceStatus, error) {
	var st MaintenanceStatus
	err := c.decode(ctx, http.MethodPost, "servers/maintenance", req, &st)
	return st, err
}

// Maintenance reads the status of the walk in progress or the last one.
func (c *Client) Maintenance(ctx context.Context) (MaintenanceStatus, error) {
	var st MaintenanceStatus
	err := c.decode(ctx, http.MethodGet, "servers/maintenance", nil, &st)
	return st, err
}

// CancelMaintenance stops the walk in progress, if any.
func (c *Client) CancelMaintenance(ctx context.Context) (MaintenanceStatus, error) {
	var st MaintenanceStatus
	err := c.decode(ctx, http.MethodDelete, "servers/maintenance", nil, &st)
	return st, err
}
