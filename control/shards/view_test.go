package shards

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/control/store"
)

// The admin API's shard endpoints over a View: exact paths, JSON errors
// with the field at fault for bad input.
func TestAdminShardEndpoints(t *testing.T) {
	st := store.NewMemory(store.MemoryOptions{}).Connect()
	defer st.Close()
	view := NewView(st, map[string]TierInfo{"l2": {Shards: 4, Members: []string{"127.0.0.1:1", "127.0.0.1:2"}}})
	srv, err := admin.New(admin.Config{Listen: "127.0.0.1:0"}, admin.Deps{Shards: view})
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		// The admin server refuses other hosts without a token (DNS
		// rebinding); httptest's default is example.com.
		req.Host = "127.0.0.1"
		srv.Handler().ServeHTTP(rec, req)
		var out map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s %s: not JSON: %q", method, path, rec.Body.String())
		}
		return rec.Code, out
	}
	cases := []struct {
		method, path, body string
		code               int
		field              string
	}{
		{"GET", "/admin/v1/shardmap", "", 400, "tier"},
		{"GET", "/admin/v1/shardmap?tier=l9", "", 404, "tier"},
		{"POST", "/admin/v1/servers/drain", "{", 400, ""},
		{"POST", "/admin/v1/servers/drain", `{"tier":"l2"}`, 400, "addr"},
		{"POST", "/admin/v1/servers/drain", `{"tier":"l2","addr":"127.0.0.1:3"}`, 400, "addr"},
		{"POST", "/admin/v1/servers/drain", `{"tier":"l2","addr":"127.0.0.1:1","x":1}`, 400, "x"},
		{"POST", "/admin/v1/servers/undrain", `{"tier":"l3","addr":"127.0.0.1:1"}`, 404, "tier"},
		{"GET", "/admin/v1/servers/drain", "", 405, ""},
	}
	for _, c := range cases {
		code, out := do(c.method, c.path, c.body)
		if code != c.code || out["error"] == nil || (c.field != "" && out["field"] != c.field) {
			t.Errorf("%s %s %s: %d %v; want %d with field %q", c.method, c.path, c.body, code, out, c.code, c.field)
		}
	}
	code, out := do("GET", "/admin/v1/shardmap?tier=l2", "")
	if code != 200 || out["version"] != float64(0) || len(out["servers"].([]any)) != 2 || out["moves_in_flight"] != float64(0) {
		t.Fatalf("shardmap before a publication: %d %v", code, out)
	}
	if code, _ := do("POST", "/admin/v1/servers/drain", `{"tier":"l2","addr":"127.0.0.1:2"}`); code != http.StatusOK {
		t.Fatalf("drain: %d", code)
	}
	rows, _, err := st.List(t.Context(), drainPrefix("l2"))
	if err != nil || len(rows) != 1 || rows[0].Key != drainKey("l2", "127.0.0.1:2") {
		t.Fatalf("drain intent rows %v %v", rows, err)
	}
	if code, _ := do("POST", "/admin/v1/servers/undrain", `{"tier":"l2","addr":"127.0.0.1:2"}`); code != http.StatusOK {
		t.Fatalf("undrain: %d", code)
	}
	if rows, _, _ := st.List(t.Context(), drainPrefix("l2")); len(rows) != 0 {
		t.Fatalf("undrain left %v", rows)
	}
}

// The conversion endpoints: pause and resume only a compat tier, and the
// shard map reports the layout's remaining share and the pause.
func TestAdminConvertEndpoints(t *testing.T) {
	st := store.NewMemory(store.MemoryOptions{}).Connect()
	defer st.Close()
	view := NewView(st, map[string]TierInfo{
		"l2": {Shards: 8, Members: decideAddrs(), Compat: true},
		"l1": {Shards: 8, Members: decideAddrs()},
	})
	srv, err := admin.New(admin.Config{Listen: "127.0.0.1:0"}, admin.Deps{Shards: view})
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path, body string) (int, admin.ShardMap) {
		t.Helper()
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Host = "127.0.0.1"
		srv.Handler().ServeHTTP(rec, req)
		var out admin.ShardMap
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		return rec.Code, out
	}
	if code, m := do("GET", "/admin/v1/shardmap?tier=l2", ""); code != 200 || m.OnLayout != 8 || m.LayoutShare != 1 || m.ConvertPaused {
		t.Fatalf("before a publication: %d %+v", code, m)
	}
	if code, _ := do("POST", "/admin/v1/convert/pause", `{"tier":"l1"}`); code != 404 {
		t.Errorf("pausing a tier without a layout: %d", code)
	}
	if code, m := do("POST", "/admin/v1/convert/pause", `{"tier":"l2"}`); code != 200 || !m.ConvertPaused {
		t.Fatalf("pause: %d %+v", code, m)
	}
	if p, err := convertPaused(t.Context(), st, "l2"); err != nil || !p {
		t.Fatalf("the leader does not see the pause: %v %v", p, err)
	}
	p := convertStart()
	p.Layout = []int{5, 6}
	if _, err := store.PutRow(t.Context(), st, mapKey("l2"), store.EncodeVersioned(1, p.Encode())); err != nil {
		t.Fatal(err)
	}
	if code, m := do("POST", "/admin/v1/convert/resume", `{"tier":"l2"}`); code != 200 || m.ConvertPaused || m.OnLayout != 2 || m.LayoutShare != 0.25 {
		t.Fatalf("resume, 2 shards of 8 on the layout: %d %+v", code, m)
	}
}

func decideAddrs() []string {
	var out []string
	for _, s := range decideMembers {
		out = append(out, s.Addr)
	}
	return out
}
