package admin

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"
)

// LocalityControl reads and steers locality routing's μ-shards.
// cmd/strata implements it with control/locality/placesvc's View; without
// it the locality endpoints are absent (404), which the page reports as
// locality routing not being configured.
//
// Errors: an unknown μ-shard is a *FieldError on "id" wrapping
// ErrNotFound (404); an unknown region a *FieldError on "to" or "region"
// (400); an error wrapping errors.ErrUnsupported says locality routing is
// off in the process that answers (501); anything else is the store's
// (503).
type LocalityControl interface {
	// MuShard returns the μ-shard id ("prefix field", as
	// keyrule.Rules.Name spells it).
	MuShard(ctx context.Context, id string) (MuShard, error)
	// Migrate asks the placement service to move id to region to, through
	// the same path as its own moves (a pin elsewhere refuses it).
	Migrate(ctx context.Context, id, to string) (MuShard, error)
	// Pin pins id to region ("" unpins).
	Pin(ctx context.Context, id, region string) (MuShard, error)
	// Migrations lists the moves in flight and the manual requests
	// refused or waiting.
	Migrations(ctx context.Context) ([]Migration, error)
}

// RegionView sums the access counters every strata ships, by region: the
// page's remote fraction per region. It is optional beside
// LocalityControl (Deps.Regions is read only with Deps.Locality), with
// the same error conventions.
type RegionView interface {
	Regions(ctx context.Context) (Regions, error)
}

// ErrNotFound is wrapped by a *FieldError on a name that has nothing
// behind it (an unknown μ-shard): a 404 naming the field.
var ErrNotFound = errors.New("not found")

// MuShard is the body of GET /admin/v1/locality/mushards/{id}.
type MuShard struct {
	ID    string `json:"id"`
	Owner string `json:"owner"`
	// Epoch grows by one with every migration; it never decreases.
	Epoch uint64 `json:"epoch"`
	// State is "stable", "prepare" or "migrating".
	State string `json:"state"`
	// Source is the previous owner while a move is under way.
	Source string `json:"source,omitempty"`
	// Counters are the decayed accesses by region, as the placement
	// service counts them (or, in a strata that does not lead it, the
	// accesses of the members' last counter batches). Never null.
	Counters map[string]float64 `json:"counters"`
	// Pin is the operator's region for this μ-shard, if any.
	Pin string `json:"pin,omitempty"`
	// History lists the last moves, oldest first; the first is the
	// creation when it is still remembered. Never null.
	History []MuShardMove `json:"history"`
	// Requested is set by a migrate call: the request was recorded; the
	// placement service carries it out on its next round.
	Requested string `json:"requested,omitempty"`
	// LastRequest is what the placement service did with the last manual
	// move request (absent: none, or not decided on yet; a migrate call
	// clears it).
	LastRequest *MoveOutcome `json:"last_request,omitempty"`
}

// MoveOutcome is what the placement service did with a manual move
// request.
type MoveOutcome struct {
	// To is the region the request named.
	To string `json:"to"`
	// Outcome is "refused" (dropped: Reason says why), "waiting" (kept:
	// the μ-shard left To too recently, "return_wait", and is decided on
	// again at Until) or "started" (a move to To began At).
	Outcome string `json:"outcome"`
	// Reason: "not_stable", "pinned to <region>", "unknown region",
	// "already_owner", "return_wait"; for a move started, its history
	// reason ("manual", "pin").
	Reason string `json:"reason,omitempty"`
	// At is when the placement service decided, on its clock.
	At    time.Time  `json:"at"`
	Until *time.Time `json:"until,omitempty"`
	// Epoch is the move's epoch when started, else the μ-shard's epoch
	// the decision was taken on.
	Epoch uint64 `json:"epoch"`
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

// Migration is one entry of GET /admin/v1/locality/migrations: a move in
// flight, or a manual request the placement service refused or keeps
// waiting (Outcome set).
type Migration struct {
	ID    string `json:"id"`
	From  string `json:"from"`
	To    string `json:"to"`
	Epoch uint64 `json:"epoch"`
	State string `json:"state"`
	// Since is when the move started (or, once Migrating, when the
	// destination began serving); for a request, when it was decided on.
	Since time.Time `json:"since"`
	// Outcome is "" for a move in flight; "refused" or "waiting" for a
	// manual request not carried out (see MoveOutcome), with its Reason
	// and, waiting, Until. From, Epoch and State are then the μ-shard's
	// row as it is now.
	Outcome string     `json:"outcome,omitempty"`
	Reason  string     `json:"reason,omitempty"`
	Until   *time.Time `json:"until,omitempty"`
}

// MigrateRequest is the body of POST .../mushards/{id}/migrate.
type MigrateRequest struct {
	To string `json:"to"`
}

// PinRequest is the body of PUT .../mushards/{id}/pin.
type PinRequest struct {
	Region string `json:"region"`
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
	// UsedBytes and LimitBytes are the region's cache memory in use and
	// its size, from the freshest capacity report of its strata
	// (memcached's bytes and limit_maxbytes summed over its L2);
	// OverCapacity: at or above the placement service's ceiling, so no
	// μ-shard moves there by the policy. All three are absent for a
	// region without a fresh report.
	UsedBytes    *uint64 `json:"used_bytes,omitempty"`
	LimitBytes   *uint64 `json:"limit_bytes,omitempty"`
	OverCapacity *bool   `json:"over_capacity,omitempty"`
}

// muShardRoute is the pattern of one μ-shard; {id} is its name as one
// percent-escaped path segment ("u:%2042" for "u: 42", a '/' as %2F).
const muShardRoute = apiPrefix + "locality/mushards/{id}"

// localityRoutes adds the contract's four routes of a LocalityControl
// and, with a RegionView, the regions route.
func (s *Server) localityRoutes(r map[string]map[string]http.HandlerFunc) {
	r[muShardRoute] = map[string]http.HandlerFunc{http.MethodGet: s.getMuShard}
	r[muShardRoute+"/migrate"] = map[string]http.HandlerFunc{http.MethodPost: s.postMigrate}
	r[muShardRoute+"/pin"] = map[string]http.HandlerFunc{http.MethodPut: s.putPin}
	r[apiPrefix+"locality/migrations"] = map[string]http.HandlerFunc{http.MethodGet: s.getMigrations}
	if s.deps.Regions != nil {
		r[apiPrefix+"locality/regions"] = map[string]http.HandlerFunc{http.MethodGet: s.getRegions}
	}
}

// writeMuShard answers m with code, empty lists as [] and {}, never null:
// a client iterates them without a check.
func writeMuShard(w http.ResponseWriter, code int, m MuShard) {
	if m.Counters == nil {
		m.Counters = map[string]float64{}
	}
	if m.History == nil {
		m.History = []MuShardMove{}
	}
	writeJSON(w, code, m)
}

func (s *Server) getMuShard(w http.ResponseWriter, r *http.Request) {
	m, err := s.deps.Locality.MuShard(r.Context(), r.PathValue("id"))
	if err != nil {
		writeLocalityErr(w, err)
		return
	}
	writeMuShard(w, http.StatusOK, m)
}

func (s *Server) postMigrate(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
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
	writeMuShard(w, http.StatusAccepted, m)
}

func (s *Server) putPin(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
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
	writeMuShard(w, http.StatusOK, m)
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

// LocalityMigrations lists the moves in flight and the manual requests
// refused or waiting.
func (c *Client) LocalityMigrations(ctx context.Context) ([]Migration, error) {
	var out struct {
		Migrations []Migration `json:"migrations"`
	}
	return out.Migrations, c.decode(ctx, http.MethodGet, "locality/migrations", nil, &out)
}

// LocalityRegions reads the requests and remote accesses by region.
func (c *Client) LocalityRegions(ctx context.Context) (Regions, error) {
	var rs Regions
	return rs, c.decode(ctx, http.MethodGet, "locality/regions", nil, &rs)
}
