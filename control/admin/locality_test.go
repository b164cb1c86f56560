package admin

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"testing"
)

// locality is a stand-in LocalityControl: the HTTP layer is under test
// here (placesvc's View tests the endpoints over a real store).
type locality struct{ ids []string }

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
		{"GET", p, "", 400, "id"},
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
	if loc.ids[0] != "u: a/b" {
		t.Fatalf("the handler got id %q", loc.ids[0])
	}
	if r := do(t, s, "POST", p+esc+"/migrate", "", `{"to":"b"}`); r.code != http.StatusAccepted || r.json(t)["requested"] != "b" {
		t.Fatalf("migrate reply: %d %s", r.code, r.body)
	}
}
