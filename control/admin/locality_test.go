package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/stall"
)

// locTable is a small LocalityControl and RegionView over fixed rows: the
// admin side of the contract, which control/locality/placesvc implements
// over the store for users. Migrate and Pin change the rows at once
// (placesvc records a request the placement service carries out).
type locTable struct {
	mu      sync.Mutex // guards the fields below
	rows    map[string]MuShard
	regions Regions
	err     error    // returned by every call when set
	asked   []string // the names MuShard was called with
}

var (
	_ LocalityControl = (*locTable)(nil)
	_ RegionView      = (*locTable)(nil)
)

func (l *locTable) MuShard(_ context.Context, name string) (MuShard, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.asked = append(l.asked, name)
	if l.err != nil {
		return MuShard{}, l.err
	}
	m, ok := l.rows[name]
	if !ok {
		return MuShard{}, &FieldError{Field: "id", Err: fmt.Errorf("no μ-shard %q: %w", name, ErrNotFound)}
	}
	return m, nil
}

func (l *locTable) Migrate(ctx context.Context, name, to string) (MuShard, error) {
	m, err := l.MuShard(ctx, name)
	if err != nil {
		return m, err
	}
	m.Requested = to
	return m, nil
}

func (l *locTable) Pin(ctx context.Context, name, region string) (MuShard, error) {
	m, err := l.MuShard(ctx, name)
	if err != nil {
		return m, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	m.Pin = region
	l.rows[name] = m
	return m, nil
}

func (l *locTable) Migrations(context.Context) ([]Migration, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Migration
	for _, m := range l.rows {
		if m.State != "stable" {
			out = append(out, Migration{ID: m.ID, From: m.Source, To: m.Owner, Epoch: m.Epoch, State: m.State})
		}
		if r := m.LastRequest; r != nil && r.Outcome != "started" {
			out = append(out, Migration{ID: m.ID, From: m.Owner, To: r.To, Epoch: m.Epoch, State: m.State, Since: r.At,
				Outcome: r.Outcome, Reason: r.Reason, Until: r.Until})
		}
	}
	return out, l.err
}

func (l *locTable) Regions(context.Context) (Regions, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.regions, l.err
}

func (l *locTable) askedFor(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, a := range l.asked {
		if a == name {
			return true
		}
	}
	return false
}

var t1 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func newLocTable() *locTable {
	return &locTable{
		rows: map[string]MuShard{
			"u: 42": {ID: "u: 42", Owner: "b", Epoch: 3, State: "migrating", Source: "a",
				Counters: map[string]float64{"a": 12.5, "b": 87.5},
				History: []MuShardMove{
					{Epoch: 1, At: t1, To: "a", Reason: "created"},
					{Epoch: 2, At: t1.Add(7 * time.Hour), From: "a", To: "c", Reason: "manual"},
					{Epoch: 3, At: t1.Add(14 * time.Hour), From: "c", To: "b", Reason: "remote share"},
				}},
			// A name holding a slash and a percent sign must reach the
			// view whole.
			"p/x 7%": {ID: "p/x 7%", Owner: "a", Epoch: 1, State: "stable"},
		},
		regions: Regions{Self: "a", Regions: []RegionLocality{
			{Region: "a", Requests: 1000, Remote: 50, MuShards: 7},
			{Region: "b", Requests: 400, Remote: 200, MuShards: 2},
		}},
	}
}

func startLocalityServer(t *testing.T, st *state, loc *locTable) *Server {
	t.Helper()
	deps := Deps{Promotion: st, Sampler: st, Tiers: st, Config: st, Metrics: st, Clock: stall.Process()}
	if loc != nil {
		deps.Locality, deps.Regions = loc, loc
	}
	s, err := New(Config{Listen: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, deps)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(context.Background()); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return s
}

func TestMuShardEndpoint(t *testing.T) {
	loc := newLocTable()
	s := startLocalityServer(t, newState(), loc)
	r := do(t, s, "GET", "/admin/v1/locality/mushards/"+url.PathEscape("u: 42"), "", "")
	body := r.json(t)
	if r.code != 200 || body["id"] != "u: 42" || body["owner"] != "b" || body["epoch"] != 3.0 || body["state"] != "migrating" || body["source"] != "a" {
		t.Fatalf("GET u: 42: %d %s", r.code, r.body)
	}
	if c := body["counters"].(map[string]any); c["b"] != 87.5 || len(body["history"].([]any)) != 3 {
		t.Fatalf("counters and history: %s", r.body)
	}
	// The typed client escapes the name the same way.
	m, err := NewClient(s.Addr(), "", 5*time.Second).MuShard(context.Background(), "p/x 7%")
	if err != nil || m.Owner != "a" || m.State != "stable" {
		t.Fatalf("client MuShard(p/x 7%%): %+v %v", m, err)
	}
	// Empty lists come out as [] and {}, never null.
	if r := do(t, s, "GET", "/admin/v1/locality/mushards/p%2Fx%207%25", "", "").json(t); fmt.Sprint(r["counters"], r["history"]) != "map[] []" {
		t.Fatalf("a row without counters: %v", r)
	}
}

func TestMuShardErrors(t *testing.T) {
	loc := newLocTable()
	s := startLocalityServer(t, newState(), loc)
	cl := NewClient(s.Addr(), "", 5*time.Second)
	_, err := cl.MuShard(context.Background(), "u: 999")
	var ae *APIError
	if !errors.As(err, &ae) || ae.Code != 404 || ae.Field != "id" || !strings.Contains(ae.Message, `"u: 999"`) {
		t.Fatalf("unknown μ-shard: %v", err)
	}
	for _, c := range []struct {
		path string
		code int
	}{
		{"/admin/v1/locality/mushards/", 404},         // no name: no such endpoint
		{"/admin/v1/locality/mushards/a/b", 404},      // a bare slash splits the name: no such endpoint
		{"/admin/v1/locality/mushards/u%3A%201", 404}, // a name without a row
	} {
		if r := do(t, s, "GET", c.path, "", ""); r.code != c.code {
			t.Errorf("GET %s: %d %s, want %d", c.path, r.code, r.body, c.code)
		}
	}
	if r := do(t, s, "PUT", "/admin/v1/locality/mushards/x", "", "{}"); r.code != 405 || r.hdr.Get("Allow") != "GET" {
		t.Errorf("PUT on a μ-shard: %d %s", r.code, r.body)
	}
	// The pattern spelt out is a μ-shard named "{id}", not the route
	// reached without a value.
	if r := do(t, s, "GET", "/admin/v1/locality/mushards/{id}", "", ""); r.code != 404 || r.json(t)["field"] != "id" || !loc.askedFor("{id}") {
		t.Errorf("GET of the pattern itself: %d %s", r.code, r.body)
	}
	// A refused field other than a missing name is the caller's mistake;
	// anything else is the store's.
	loc.mu.Lock()
	loc.err = &FieldError{Field: "id", Err: errors.New("longer than 250 bytes")}
	loc.mu.Unlock()
	if r := do(t, s, "GET", "/admin/v1/locality/mushards/x", "", ""); r.code != 400 || r.json(t)["field"] != "id" {
		t.Errorf("refused name: %d %s", r.code, r.body)
	}
	loc.mu.Lock()
	loc.err = fmt.Errorf("locality routing is off: %w", errors.ErrUnsupported)
	loc.mu.Unlock()
	for _, p := range []string{"/admin/v1/locality/mushards/x", "/admin/v1/locality/regions", "/admin/v1/locality/migrations"} {
		if r := do(t, s, "GET", p, "", ""); r.code != 501 || !strings.Contains(r.json(t)["error"].(string), "locality routing is off") {
			t.Errorf("%s with locality off: %d %s", p, r.code, r.body)
		}
	}
	loc.mu.Lock()
	loc.err = errors.New("etcd: context deadline exceeded")
	loc.mu.Unlock()
	for _, p := range []string{"/admin/v1/locality/mushards/x", "/admin/v1/locality/regions", "/admin/v1/locality/migrations"} {
		if r := do(t, s, "GET", p, "", ""); r.code != 503 || !strings.Contains(r.json(t)["error"].(string), "deadline") {
			t.Errorf("%s with the store down: %d %s", p, r.code, r.body)
		}
	}
}

func TestLocalityEndpointsNeedTheToken(t *testing.T) {
	st := newState()
	loc := newLocTable()
	s, err := New(Config{Listen: "127.0.0.1:0", Token: "tok", Logger: slog.New(slog.DiscardHandler)}, Deps{Promotion: st, Locality: loc, Regions: loc})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	if r := do(t, s, "GET", "/admin/v1/locality/mushards/u%3A%2042", "", ""); r.code != 401 {
		t.Fatalf("without the token: %d", r.code)
	}
	if loc.askedFor("u: 42") {
		t.Fatal("the view was asked before the token was checked")
	}
	if r := do(t, s, "GET", "/admin/v1/locality/mushards/u%3A%2042", "tok", ""); r.code != 200 {
		t.Fatalf("with the token: %d %s", r.code, r.body)
	}
}

func TestRegionsEndpointAndIndex(t *testing.T) {
	s := startLocalityServer(t, newState(), newLocTable())
	r := do(t, s, "GET", "/admin/v1/locality/regions", "", "")
	var rs Regions
	if err := json.Unmarshal(r.body, &rs); err != nil || r.code != 200 || rs.Self != "a" || len(rs.Regions) != 2 ||
		rs.Regions[1] != (RegionLocality{Region: "b", Requests: 400, Remote: 200, MuShards: 2}) {
		t.Fatalf("regions: %d %s", r.code, r.body)
	}
	idx := string(do(t, s, "GET", "/admin/v1/", "", "").body)
	for _, p := range []string{`"/admin/v1/locality/mushards/{id}"`, `"/admin/v1/locality/mushards/{id}/migrate"`,
		`"/admin/v1/locality/mushards/{id}/pin"`, `"/admin/v1/locality/migrations"`, `"/admin/v1/locality/regions"`} {
		if !strings.Contains(idx, p) {
			t.Errorf("the index does not list %s: %s", p, idx)
		}
	}
	// Without a LocalityControl the paths do not exist.
	off := startLocalityServer(t, newState(), nil)
	if r := do(t, off, "GET", "/admin/v1/locality/mushards/u%3A%2042", "", ""); r.code != 404 || r.json(t)["field"] != nil {
		t.Fatalf("locality off: %d %s", r.code, r.body)
	}
	if strings.Contains(string(do(t, off, "GET", "/admin/v1/", "", "").body), "locality") {
		t.Fatal("the index lists locality endpoints without a LocalityControl")
	}
}

func TestMatchPath(t *testing.T) {
	const p = "/admin/v1/locality/mushards/{id}/pin"
	for _, c := range []struct {
		path, want string
		ok         bool
	}{
		{"/admin/v1/locality/mushards/u:%2042/pin", "u: 42", true},
		{"/admin/v1/locality/mushards/a%2Fb/pin", "a/b", true},
		{"/admin/v1/locality/mushards/a/b/pin", "", false},
		{"/admin/v1/locality/mushards//pin", "", false},
		{"/admin/v1/locality/mushards/x/pins", "", false},
		{"/admin/v1/locality/mushards/%4/pin", "", false},
		{"/admin/v1/locality/mushards/x", "", false},
	} {
		got := ""
		ok := matchPath(p, c.path, func(name, v string) {
			if name != "id" {
				t.Errorf("wildcard named %q", name)
			}
			got = v
		})
		if ok != c.ok || got != c.want {
			t.Errorf("%s: %v %q, want %v %q", c.path, ok, got, c.ok, c.want)
		}
	}
}

// FuzzMatchPath: a match never panics, and a matched value escaped back
// into the pattern matches again with the same value (the page and
// strata ctl escape names with encodeURIComponent and url.PathEscape).
func FuzzMatchPath(f *testing.F) {
	const p = "/admin/v1/locality/mushards/{id}"
	for _, seed := range []string{
		"/admin/v1/locality/mushards/u%3A%2042", // the page's spelling of "u: 42"
		"/admin/v1/locality/mushards/u:%2042",   // Go's
		"/admin/v1/locality/mushards/a%2Fb",     // a slash inside the name
		"/admin/v1/locality/mushards/%",         // a truncated escape
		"/admin/v1/locality/mushards/",          // no name
		"/admin/v1/locality/mushards/%C3%A9",    // UTF-8
		"//admin/v1/locality/mushards/x",        // one segment too many
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, path string) {
		var v string
		if !matchPath(p, path, func(_, val string) { v = val }) {
			return
		}
		if v == "" {
			t.Fatalf("%q matched with an empty name", path)
		}
		var again string
		if !matchPath(p, "/admin/v1/locality/mushards/"+url.PathEscape(v), func(_, val string) { again = val }) || again != v {
			t.Fatalf("%q → %q does not round-trip (%q)", path, v, again)
		}
	})
}

// locality is a stand-in LocalityControl: the HTTP layer is under test
// here (placesvc's View tests the endpoints over a real store).
type locality struct{ ids []string }

var _ LocalityControl = (*locality)(nil)

func (l *locality) MuShard(_ context.Context, id string) (MuShard, error) {
	l.ids = append(l.ids, id)
	if id == "u: gone" {
		return MuShard{}, &FieldError{Field: "id", Err: fmt.Errorf("%q: %w", id, ErrNotFound)}
	}
	return MuShard{ID: id, Owner: "a", Epoch: 1, State: "stable", Counters: map[string]float64{}}, nil
}

func (l *locality) Migrate(ctx context.Context, id, to string) (MuShard, error) {
	if to != "a" && to != "b" {
		return MuShard{}, &FieldError{Field: "to", Err: fmt.Errorf("unknown region %q", to)}
	}
	m, err := l.MuShard(ctx, id)
	m.Requested = to
	return m, err
}

func (l *locality) Pin(ctx context.Context, id, region string) (MuShard, error) {
	m, err := l.MuShard(ctx, id)
	m.Pin = region
	return m, err
}

func (l *locality) Migrations(context.Context) ([]Migration, error) { return nil, nil }

// TestLocalityRoutes: the id is one escaped path segment (a '/' in a name
// survives as %2F), each path takes one method, and bad input is a 4xx
// with a JSON body naming the field.
func TestLocalityRoutes(t *testing.T) {
	loc := &locality{}
	s, err := New(Config{Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)}, Deps{Locality: loc})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	p := "/admin/v1/locality/mushards/"
	esc := url.PathEscape("u: a/b")
	cases := []struct {
		method, path, body string
		code               int
		field              string
	}{
		{"GET", p + esc, "", 200, ""},
		{"HEAD", p + esc, "", 200, ""},
		{"POST", p + esc + "/migrate", `{"to":"b"}`, 202, ""},
		{"PUT", p + esc + "/pin", `{"region":""}`, 200, ""},
		{"GET", "/admin/v1/locality/migrations", "", 200, ""},
		{"GET", p + url.PathEscape("u: gone"), "", 404, "id"},
		{"POST", p + esc + "/migrate", `{"to":"mars"}`, 400, "to"},
		{"POST", p + esc + "/migrate", `{}`, 400, "to"},
		{"POST", p + esc + "/migrate", `{"to":`, 400, ""},
		{"POST", p + esc + "/migrate", `{"to":"b","x":1}`, 400, "x"},
		{"PUT", p + esc, "", 405, ""},
		{"GET", p + esc + "/pin", "", 405, ""},
		{"GET", p + esc + "/other", "", 404, ""},
		// No id: no route (the wildcard takes one non-empty segment).
		{"GET", p, "", 404, ""},
	}
	for _, c := range cases {
		r := do(t, s, c.method, c.path, "", c.body)
		if r.code != c.code {
			t.Errorf("%s %s %s: %d %s, want %d", c.method, c.path, c.body, r.code, r.body, c.code)
			continue
		}
		if c.method == "HEAD" {
			continue
		}
		if out := r.json(t); c.code >= 400 && (out["error"] == nil || c.field != "" && out["field"] != c.field) {
			t.Errorf("%s %s: %d %v, want field %q", c.method, c.path, r.code, out, c.field)
		}
	}
	// Without a RegionView there is no regions route.
	if r := do(t, s, "GET", "/admin/v1/locality/regions", "", ""); r.code != 404 {
		t.Errorf("regions without a RegionView: %d %s", r.code, r.body)
	}
	if loc.ids[0] != "u: a/b" {
		t.Fatalf("the handler got id %q", loc.ids[0])
	}
	if r := do(t, s, "POST", p+esc+"/migrate", "", `{"to":"b"}`); r.code != http.StatusAccepted || r.json(t)["requested"] != "b" {
		t.Fatalf("migrate reply: %d %s", r.code, r.body)
	}
}
