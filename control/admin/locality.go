package admin

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"
)

// LocalityView reads the location table: what the page's μ-shard lookup
// and strata ctl show. control/locality implements it; cmd/strata wires
// it when locality routing is on. Without it the locality endpoints are
// absent (404), which the page reports as locality routing being off.
type LocalityView interface {
	// MuShard returns the μ-shard named name ("prefix field", as
	// keyrule.Rules.Name spells it). A name without a row is a
	// *FieldError on "id" wrapping ErrNotFound. An error wrapping
	// errors.ErrUnsupported says locality routing is off (501).
	MuShard(ctx context.Context, name string) (MuShard, error)
}

// RegionView sums the access counters every strata ships, by region: the
// page's remote fraction per region. It is optional beside LocalityView.
type RegionView interface {
	Regions(ctx context.Context) (Regions, error)
}

// ErrNotFound is wrapped by a *FieldError on a name that has nothing
// behind it (an unknown μ-shard or region): a 404 naming the field.
var ErrNotFound = errors.New("not found")

// MuShard is the body of GET /admin/v1/locality/mushards/{id}.
type MuShard struct {
	ID    string `json:"id"`
	Owner string `json:"owner"`
	// Epoch grows by one with every migration; it never decreases.
	Epoch uint64 `json:"epoch"`
	// State is "stable", "prepare" or "migrating".
	State string `json:"state"`
	// Source is the previous owner while the state is not stable.
	Source string `json:"source,omitempty"`
	// Counters are the decayed access counts by region of the clients,
	// as the placement service scores them.
	Counters map[string]float64 `json:"counters"`
	// History lists the last moves, oldest first; the first is the
	// creation when it is still remembered.
	History []MuShardMove `json:"history"`
}

// MuShardMove is one entry of a μ-shard's history.
type MuShardMove struct {
	Epoch uint64    `json:"epoch"`
	At    time.Time `json:"at"`
	From  string    `json:"from,omitempty"` // "" for the creation
	To    string    `json:"to"`
	// Reason is why: "created", "manual", or the placement policy's reason.
	Reason string `json:"reason"`
}

// Regions is the body of GET /admin/v1/locality/regions.
type Regions struct {
	// Self is the region of the strata that answered.
	Self    string           `json:"self"`
	Regions []RegionLocality `json:"regions"`
}

// RegionLocality is what the clients of one region asked for, over the
// counters' window (decayed like the placement service's scores).
type RegionLocality struct {
	Region string `json:"region"`
	// Requests made by the region's clients, and those of them that
	// another region served.
	Requests float64 `json:"requests"`
	Remote   float64 `json:"remote"`
	// MuShards is how many μ-shards the region owns.
	MuShards int `json:"mushards"`
}

// localityRoutes adds the routes of a LocalityView and a RegionView.
func (s *Server) localityRoutes(r map[string]map[string]http.HandlerFunc) {
	if s.deps.Locality != nil {
		r[apiPrefix+"locality/mushards/{id}"] = map[string]http.HandlerFunc{http.MethodGet: s.getMuShard}
	}
	if s.deps.Regions != nil {
		r[apiPrefix+"locality/regions"] = map[string]http.HandlerFunc{http.MethodGet: s.getRegions}
	}
}

func (s *Server) getMuShard(w http.ResponseWriter, r *http.Request) {
	m, err := s.deps.Locality.MuShard(r.Context(), r.PathValue("id"))
	if err != nil {
		writeLocalityErr(w, err)
		return
	}
	// Empty lists, not null: a client iterates them without a check.
	if m.Counters == nil {
		m.Counters = map[string]float64{}
	}
	if m.History == nil {
		m.History = []MuShardMove{}
	}
	writeJSON(w, http.StatusOK, m)
}

func (s *Server) getRegions(w http.ResponseWriter, r *http.Request) {
	rs, err := s.deps.Regions.Regions(r.Context())
	if err != nil {
		writeLocalityErr(w, err)
		return
	}
	if rs.Regions == nil {
		rs.Regions = []RegionLocality{}
	}
	writeJSON(w, http.StatusOK, rs)
}

// writeLocalityErr: a name with nothing behind it is a 404 naming the
// field, another refused field a 400, locality routing off a 501,
// anything else the store's (503).
func writeLocalityErr(w http.ResponseWriter, err error) {
	var fe *FieldError
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		writeError(w, http.StatusNotImplemented, "", err.Error())
	case errors.As(err, &fe) && errors.Is(err, ErrNotFound):
		writeError(w, http.StatusNotFound, fe.Field, fe.Err.Error())
	case errors.As(err, &fe):
		writeError(w, http.StatusBadRequest, fe.Field, fe.Err.Error())
	default:
		writeError(w, http.StatusServiceUnavailable, "", err.Error())
	}
}

// MuShard reads the μ-shard named name.
func (c *Client) MuShard(ctx context.Context, name string) (MuShard, error) {
	var m MuShard
	return m, c.decode(ctx, http.MethodGet, "locality/mushards/"+url.PathEscape(name), nil, &m)
}
