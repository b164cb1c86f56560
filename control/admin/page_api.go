package admin

import (
	"math"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/strata-cache/strata/control/admin/history"
	"github.com/strata-cache/strata/sampler/model"
	"github.com/strata-cache/strata/tiers/promote"
)

// TopKeyView lists the busiest sampled keys, for the page's hot-key table.
type TopKeyView interface {
	TopKeys(n int, span time.Duration) []TopKey
}

// TopKey is one row of GET /admin/v1/topkeys.
type TopKey struct {
	Key      string  `json:"key"`
	Family   string  `json:"family"`
	Accesses uint64  `json:"accesses"`
	Reads    uint64  `json:"reads"`
	L1Hits   uint64  `json:"l1_hits"`
	PerSec   float64 `json:"per_sec"`
}

// Bounds of GET /admin/v1/topkeys.
const (
	topKeysSpan    = time.Minute
	topKeysDefault = 20
	topKeysMax     = 1000
)

// addPageRoutes adds the endpoints the page reads beyond the API of
// strata ctl: the endpoint index, the time series, the promotion model at
// the current N and the busiest sampled keys.
func (s *Server) addPageRoutes(r map[string]map[string]http.HandlerFunc) {
	r[apiPrefix] = map[string]http.HandlerFunc{http.MethodGet: s.getIndex}
	r["/static/page.js"] = map[string]http.HandlerFunc{http.MethodGet: s.static("page.js", "text/javascript; charset=utf-8")}
	r["/static/page.css"] = map[string]http.HandlerFunc{http.MethodGet: s.static("page.css", "text/css; charset=utf-8")}
	if s.hist != nil {
		r[apiPrefix+"history"] = map[string]http.HandlerFunc{http.MethodGet: s.getHistory}
	}
	if s.deps.Promotion != nil {
		r[apiPrefix+"promotion/model"] = map[string]http.HandlerFunc{http.MethodGet: s.getModel}
	}
	if s.deps.TopKeys != nil {
		r[apiPrefix+"topkeys"] = map[string]http.HandlerFunc{http.MethodGet: s.getTopKeys}
	}
}

// getIndex lists the endpoints this server has, so the page asks only for
// what exists and shows the rest as not configured, without a failed
// request per missing section on every poll.
func (s *Server) getIndex(w http.ResponseWriter, _ *http.Request) {
	type endpoint struct {
		Path    string   `json:"path"`
		Methods []string `json:"methods"`
	}
	out := []endpoint{}
	for p, ms := range s.routes {
		e := endpoint{Path: p}
		for m := range ms {
			e.Methods = append(e.Methods, m)
		}
		sort.Strings(e.Methods)
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	writeJSON(w, http.StatusOK, map[string]any{"endpoints": out})
}

// historyReply is the body of GET /admin/v1/history.
type historyReply struct {
	IntervalSeconds float64         `json:"interval_seconds"`
	Started         time.Time       `json:"started"`
	Points          []history.Point `json:"points"`
}

func (s *Server) getHistory(w http.ResponseWriter, r *http.Request) {
	// ?since=T (Unix ms) returns only newer points, so a page polling every
	// second fetches one point, not a day of them.
	var pts []history.Point
	if v := r.URL.Query().Get("since"); v != "" {
		since, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, "since", "want Unix milliseconds")
			return
		}
		pts = s.hist.Since(since)
	} else {
		pts = s.hist.Points()
	}
	if pts == nil {
		pts = []history.Point{}
	}
	writeJSON(w, http.StatusOK, historyReply{IntervalSeconds: s.hist.Interval().Seconds(), Started: s.started, Points: pts})
}

// modelTrials is how many accesses the model curves span, as in the
// sampler's report.
const modelTrials = model.MaxTrials

// modelReply is the body of GET /admin/v1/promotion/model: P(promoted
// within k L2 hits) for the N in force, and the same curve for the
// per-hit promotion rate strata observed since it started.
type modelReply struct {
	Threshold uint32 `json:"threshold"`
	// Model[k-1] = 1 − (1 − 1/N)^k.
	Model       []float64 `json:"model"`
	TrialsTo90  int       `json:"trials_to_90"`
	L2Hits      uint64    `json:"l2_hits"`
	Promotions  uint64    `json:"promotions"`
	Observed    float64   `json:"observed_rate"` // promotions ÷ L2 hits; -1 without L2 hits
	ImpliedN    int       `json:"implied_threshold"`
	ObservedFit []float64 `json:"observed"` // the model at the observed rate; empty without L2 hits
}

func (s *Server) getModel(w http.ResponseWriter, _ *http.Request) {
	n := s.deps.Promotion.Promotion().Threshold
	rep := modelReply{Threshold: n, Model: make([]float64, modelTrials), TrialsTo90: model.TrialsToReach(int(n), 0.9), Observed: -1, ObservedFit: []float64{}}
	for k := 1; k <= modelTrials; k++ {
		rep.Model[k-1] = promote.Probability(n, k)
	}
	if s.hist != nil {
		tot := s.hist.Total()
		rep.L2Hits, rep.Promotions = tot.L2Hits, tot.Promotions
	}
	if rep.L2Hits > 0 {
		rep.Observed = float64(rep.Promotions) / float64(rep.L2Hits)
		if rep.Observed > 0 {
			rep.ImpliedN = int(math.Round(1 / rep.Observed))
		}
		for k := 1; k <= modelTrials; k++ {
			rep.ObservedFit = append(rep.ObservedFit, promote.ProbabilityRate(rep.Observed, k))
		}
	}
	writeJSON(w, http.StatusOK, rep)
}

func (s *Server) getTopKeys(w http.ResponseWriter, r *http.Request) {
	n := topKeysDefault
	if v := r.URL.Query().Get("n"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		if err != nil || n < 1 || n > topKeysMax {
			writeError(w, http.StatusBadRequest, "n", "want a whole number from 1 to "+strconv.Itoa(topKeysMax))
			return
		}
	}
	keys := s.deps.TopKeys.TopKeys(n, topKeysSpan)
	if keys == nil {
		keys = []TopKey{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"span_seconds": topKeysSpan.Seconds(), "keys": keys})
}

// countersOf reads the figures of the time series off a metrics snapshot.
func countersOf(src MetricsSource) history.Counters {
	var snap Snapshot
	src.Metrics(&snap)
	var c history.Counters
	for _, t := range snap.TierRequests {
		switch t.Tier {
		case "l1":
			c.L1Reads += t.Count
			if t.Result == "hit" {
				c.L1Hits += t.Count
			}
		case "l2":
			c.L2Reads += t.Count
			if t.Result == "hit" {
				c.L2Hits += t.Count
			}
		}
		if t.Result == "error" {
			c.Errors += t.Count
		}
	}
	for _, r := range snap.Requests {
		c.Requests += r.Count
	}
	for _, p := range snap.Promotions {
		switch p.Label {
		case "done":
			c.Promotions = p.Count
		case "failed":
			c.PromotionsFail = p.Count
		}
	}
	c.Conns = snap.ConnectionsCurrent
	for _, l := range snap.LocalityRequests {
		c.LocalityRequests += l.Count
		if l.Label != "local" {
			c.LocalityRemote += l.Count
		}
	}
	c.Migrations = snap.LocalityMigrations
	c.MigrationsInFlight = snap.LocalityMigrationsInFlight
	// Every operation class shares the proxy's bounds: sum them.
	for _, h := range snap.Latencies {
		if c.LatencyBounds == nil {
			c.LatencyBounds = h.Bounds
			c.LatencyCounts = make([]uint64, len(h.Counts))
		}
		if len(h.Counts) != len(c.LatencyCounts) {
			continue
		}
		for i, n := range h.Counts {
			c.LatencyCounts[i] += n
		}
	}
	return c
}
