package admin

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// LocalityControl reads and steers locality routing's μ-shards.
// cmd/strata implements it with control/locality/placesvc's View. An
// unknown μ-shard is a *FieldError on "id" wrapping ErrNotFound; an
// unknown region a *FieldError on "to" or "region".
type LocalityControl interface {
	MuShard(ctx context.Context, id string) (MuShard, error)
	// Migrate asks the placement service to move id to region to, through
	// the same path as its own moves (a pin elsewhere refuses it).
	Migrate(ctx context.Context, id, to string) (MuShard, error)
	// Pin pins id to region ("" unpins).
	Pin(ctx context.Context, id, region string) (MuShard, error)
	Migrations(ctx context.Context) ([]Migration, error)
}

// ErrNotFound is wrapped by the FieldError of an unknown μ-shard.
var ErrNotFound = errors.New("not found")

// MuShard is the body of GET /admin/v1/locality/mushards/{id}.
type MuShard struct {
	ID    string `json:"id"`
	Owner string `json:"owner"`
	Epoch uint64 `json:"epoch"`
	// State is "stable", "prepare" or "migrating".
	State string `json:"state"`
	// Source is the previous owner while a move is under way.
	Source string `json:"source,omitempty"`
	// Counters are the decayed accesses by region, as the placement
	// service counts them (or, in a strata that does not lead it, the
	// accesses of the members' last counter batches).
	Counters map[string]float64 `json:"counters"`
	// Pin is the operator's region for this μ-shard, if any.
	Pin     string        `json:"pin,omitempty"`
	History []MuShardMove `json:"history"`
	// Requested is set by a migrate call: the request was recorded; the
	// placement service carries it out on its next round.
	Requested string `json:"requested,omitempty"`
}

// MuShardMove is one entry of a μ-shard's history.
type MuShardMove struct {
	Epoch  uint64    `json:"epoch"`
	At     time.Time `json:"at"`
	From   string    `json:"from,omitempty"`
	To     string    `json:"to"`
	Reason string    `json:"reason"`
}

// Migration is one move in flight, in GET /admin/v1/locality/migrations.
type Migration struct {
	ID    string `json:"id"`
	From  string `json:"from"`
	To    string `json:"to"`
	Epoch uint64 `json:"epoch"`
	State string `json:"state"`
	// Since is when the move started (or, once Migrating, when the
	// destination began serving).
	Since time.Time `json:"since"`
}

// MigrateRequest is the body of POST .../mushards/{id}/migrate.
type MigrateRequest struct {
	To string `json:"to"`
}

// PinRequest is the body of PUT .../mushards/{id}/pin.
type PinRequest struct {
	Region string `json:"region"`
}

const muShardsPath = apiPrefix + "locality/mushards/"

// localityRoutes adds the fixed routes of a LocalityControl; the routes
// under mushards/ carry the id in the path and are matched by
// serveMuShard.
func (s *Server) localityRoutes(r map[string]map[string]http.HandlerFunc) {
	r[apiPrefix+"locality/migrations"] = map[string]http.HandlerFunc{http.MethodGet: s.getMigrations}
}

// serveMuShard routes /admin/v1/locality/mushards/{id}[/migrate|/pin].
// The id is one path segment, percent-escaped ("u:%2042" for "u: 42"),
// so a μ-shard name may hold any byte, '/' included (as %2F).
func (s *Server) serveMuShard(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.EscapedPath(), muShardsPath)
	seg, action, _ := strings.Cut(rest, "/")
	id, err := url.PathUnescape(seg)
	if err != nil || id == "" {
		writeError(w, http.StatusBadRequest, "id", "missing or badly escaped μ-shard id")
		return
	}
	var method string
	var h func(w http.ResponseWriter, r *http.Request, id string)
	switch action {
	case "":
		method, h = http.MethodGet, s.getMuShard
	case "migrate":
		method, h = http.MethodPost, s.postMigrate
	case "pin":
		method, h = http.MethodPut, s.putPin
	default:
		writeError(w, http.StatusNotFound, "", "no such endpoint: "+r.URL.Path)
		return
	}
	if r.Method != method && !(r.Method == http.MethodHead && method == http.MethodGet) {
		w.Header().Set("Allow", method)
		writeError(w, http.StatusMethodNotAllowed, "", "method "+r.Method+" not allowed; use "+method)
		return
	}
	h(w, r, id)
}

func (s *Server) getMuShard(w http.ResponseWriter, r *http.Request, id string) {
	m, err := s.deps.Locality.MuShard(r.Context(), id)
	if err != nil {
		writeLocalityErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, m)
}

func (s *Server) postMigrate(w http.ResponseWriter, r *http.Request, id string) {
	var req MigrateRequest
	if !decodeBody(w, r, &req) {
		return
	}
	if req.To == "" {
		writeError(w, http.StatusBadRequest, "to", "missing")
		return
	}
	m, err := s.deps.Locality.Migrate(r.Context(), id, req.To)
	if err != nil {
		writeLocalityErr(w, err)
		return
	}
	s.log.Info("admin locality migrate", "mushard", id, "to", req.To)
	writeJSON(w, http.StatusAccepted, m)
}

func (s *Server) putPin(w http.ResponseWriter, r *http.Request, id string) {
	var req PinRequest
	if !decodeBody(w, r, &req) {
		return
	}
	m, err := s.deps.Locality.Pin(r.Context(), id, req.Region)
	if err != nil {
		writeLocalityErr(w, err)
		return
	}
	s.log.Info("admin locality pin", "mushard", id, "region", req.Region)
	writeJSON(w, http.StatusOK, m)
}

func (s *Server) getMigrations(w http.ResponseWriter, r *http.Request) {
	ms, err := s.deps.Locality.Migrations(r.Context())
	if err != nil {
		writeLocalityErr(w, err)
		return
	}
	if ms == nil {
		ms = []Migration{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"migrations": ms})
}

// writeLocalityErr: an unknown μ-shard is 404, another refused field 400,
// anything else the store's (503).
func writeLocalityErr(w http.ResponseWriter, err error) {
	var fe *FieldError
	switch {
	case errors.As(err, &fe) && errors.Is(err, ErrNotFound):
		writeError(w, http.StatusNotFound, fe.Field, fe.Err.Error())
	case errors.As(err, &fe):
		writeError(w, http.StatusBadRequest, fe.Field, fe.Err.Error())
	default:
		writeError(w, http.StatusServiceUnavailable, "", err.Error())
	}
}

func muShardPath(id string) string { return "locality/mushards/" + url.PathEscape(id) }

// MuShard reads one μ-shard's location, counters and history.
func (c *Client) MuShard(ctx context.Context, id string) (MuShard, error) {
	var m MuShard
	return m, c.decode(ctx, http.MethodGet, muShardPath(id), nil, &m)
}

// MigrateMuShard asks for a move of id to region to.
func (c *Client) MigrateMuShard(ctx context.Context, id, to string) (MuShard, error) {
	var m MuShard
	return m, c.decode(ctx, http.MethodPost, muShardPath(id)+"/migrate", MigrateRequest{To: to}, &m)
}

// PinMuShard pins id to region ("" unpins).
func (c *Client) PinMuShard(ctx context.Context, id, region string) (MuShard, error) {
	var m MuShard
	return m, c.decode(ctx, http.MethodPut, muShardPath(id)+"/pin", PinRequest{Region: region}, &m)
}

// LocalityMigrations lists the moves in flight.
func (c *Client) LocalityMigrations(ctx context.Context) ([]Migration, error) {
	var out struct {
		Migrations []Migration `json:"migrations"`
	}
	return out.Migrations, c.decode(ctx, http.MethodGet, "locality/migrations", nil, &out)
}
