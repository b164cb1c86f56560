package admin

import (
	"context"
	"errors"
	"net/http"
	"net/url"
)

// ShardControl reads a managed tier's published shard map and records
// drain intents. cmd/strata implements it over control/shards.
type ShardControl interface {
	// ShardMap returns the tier's published map. An unknown tier is a
	// *FieldError on "tier".
	ShardMap(ctx context.Context, tier string) (ShardMap, error)
	// SetDrain records (drain true) or removes the intent to empty addr.
	// An unknown tier or server is a *FieldError on "tier" or "addr".
	SetDrain(ctx context.Context, tier, addr string, drain bool) error
	// SetMaintenance records (on true) or removes that a maintenance
	// walk has addr, which lengthens the handoff of its moves. An
	// unknown tier or server is a *FieldError on "tier" or "addr".
	SetMaintenance(ctx context.Context, tier, addr string, on bool) error
	// SetConvertPaused records (paused true) or removes the operator's
	// pause of the tier's conversion from its compat layout. An unknown
	// tier is a *FieldError on "tier".
	SetConvertPaused(ctx context.Context, tier string, paused bool) error
}

// ShardMap is the body of GET /admin/v1/shardmap?tier=NAME.
type ShardMap struct {
	// Version of the published map; 0 before the first publication.
	Version uint64        `json:"version"`
	Servers []ShardServer `json:"servers"`
	// MovesInFlight counts the shards of the batch being moved.
	MovesInFlight int `json:"moves_in_flight"`
	// Phase is that batch's phase ("prepare", "handoff", "settle"); empty
	// when no move is in flight.
	Phase string `json:"phase,omitempty"`
	// Conversion from a compat layout (the incumbent's placement): the
	// shards the layout still places, their share of all shards (0 once
	// converted), and whether the operator paused the conversion. Absent
	// for a tier without a compat layout.
	OnLayout      int     `json:"on_layout,omitempty"`
	LayoutShare   float64 `json:"layout_share,omitempty"`
	ConvertPaused bool    `json:"convert_paused,omitempty"`
}

// ShardServer is one server of a ShardMap.
type ShardServer struct {
	Addr string `json:"addr"`
	// State is "up", "down", "draining" or "returning".
	State  string `json:"state"`
	Shards int    `json:"shards"`
	// Load is the requests per second of the shards it owns, as the
	// agents last reported them.
	Load float64 `json:"load"`
	// Replicas counts the shards it holds a read replica of (joining,
	// serving or leaving), besides those it owns.
	Replicas int `json:"replicas"`
}

// ConvertRequest is the body of POST /admin/v1/convert/pause and resume.
type ConvertRequest struct {
	Tier string `json:"tier"`
}

// DrainRequest is the body of POST /admin/v1/servers/drain and undrain.
type DrainRequest struct {
	Tier string `json:"tier"`
	Addr string `json:"addr"`
}

func (s *Server) getShardMap(w http.ResponseWriter, r *http.Request) {
	tier := r.URL.Query().Get("tier")
	if tier == "" {
		writeError(w, http.StatusBadRequest, "tier", "missing query parameter tier")
		return
	}
	m, err := s.deps.Shards.ShardMap(r.Context(), tier)
	if err != nil {
		writeShardErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, m)
}

func (s *Server) postDrain(drain bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req DrainRequest
		if !decodeBody(w, r, &req) {
			return
		}
		switch {
		case req.Tier == "":
			writeError(w, http.StatusBadRequest, "tier", "missing")
			return
		case req.Addr == "":
			writeError(w, http.StatusBadRequest, "addr", "missing")
			return
		}
		if err := s.deps.Shards.SetDrain(r.Context(), req.Tier, req.Addr, drain); err != nil {
			writeShardErr(w, err)
			return
		}
		verb := "undrain"
		if drain {
			verb = "drain"
		}
		s.log.Info("admin "+verb, "tier", req.Tier, "addr", req.Addr)
		m, err := s.deps.Shards.ShardMap(r.Context(), req.Tier)
		if err != nil {
			writeShardErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, m)
	}
}

func (s *Server) postConvert(paused bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req ConvertRequest
		if !decodeBody(w, r, &req) {
			return
		}
		if req.Tier == "" {
			writeError(w, http.StatusBadRequest, "tier", "missing")
			return
		}
		if err := s.deps.Shards.SetConvertPaused(r.Context(), req.Tier, paused); err != nil {
			writeShardErr(w, err)
			return
		}
		s.log.Info("admin conversion", "tier", req.Tier, "paused", paused)
		m, err := s.deps.Shards.ShardMap(r.Context(), req.Tier)
		if err != nil {
			writeShardErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, m)
	}
}

// writeShardErr: a refused field is the caller's mistake (404 for an
// unknown tier, 400 otherwise); anything else is the store's (503).
func writeShardErr(w http.ResponseWriter, err error) {
	var fe *FieldError
	switch {
	case errors.As(err, &fe) && fe.Field == "tier":
		writeError(w, http.StatusNotFound, fe.Field, fe.Err.Error())
	case errors.As(err, &fe):
		writeError(w, http.StatusBadRequest, fe.Field, fe.Err.Error())
	default:
		writeError(w, http.StatusServiceUnavailable, "", err.Error())
	}
}

// ShardMap reads a tier's published map.
func (c *Client) ShardMap(ctx context.Context, tier string) (ShardMap, error) {
	var m ShardMap
	err := c.decode(ctx, http.MethodGet, "shardmap?tier="+url.QueryEscape(tier), nil, &m)
	return m, err
}

// SetDrain drains (drain true) or undrains addr of tier and returns the map
// as it stands right after.
func (c *Client) SetDrain(ctx context.Context, tier, addr string, drain bool) (ShardMap, error) {
	path := "servers/undrain"
	if drain {
		path = "servers/drain"
	}
	var m ShardMap
	err := c.decode(ctx, http.MethodPost, path, DrainRequest{Tier: tier, Addr: addr}, &m)
	return m, err
}

// SetConvertPaused pauses (paused true) or resumes tier's conversion from
// its compat layout and returns the map as it stands right after.
func (c *Client) SetConvertPaused(ctx context.Context, tier string, paused bool) (ShardMap, error) {
	path := "convert/resume"
	if paused {
		path = "convert/pause"
	}
	var m ShardMap
	err := c.decode(ctx, http.MethodPost, path, ConvertRequest{Tier: tier}, &m)
	return m, err
}

// shardRoutes adds the routes of a ShardControl.
func (s *Server) shardRoutes(r map[string]map[string]http.HandlerFunc) {
	r[apiPrefix+"shardmap"] = map[string]http.HandlerFunc{http.MethodGet: s.getShardMap}
	r[apiPrefix+"servers/drain"] = map[string]http.HandlerFunc{http.MethodPost: s.postDrain(true)}
	r[apiPrefix+"servers/undrain"] = map[string]http.HandlerFunc{http.MethodPost: s.postDrain(false)}
	r[apiPrefix+"servers/maintenance"] = map[string]http.HandlerFunc{
		http.MethodGet: s.getMaintenance, http.MethodPost: s.postMaintenance, http.MethodDelete: s.deleteMaintenance}
	r[apiPrefix+"convert/pause"] = map[string]http.HandlerFunc{http.MethodPost: s.postConvert(true)}
	r[apiPrefix+"convert/resume"] = map[string]http.HandlerFunc{http.MethodPost: s.postConvert(false)}
}
