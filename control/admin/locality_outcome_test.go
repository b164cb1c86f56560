package admin

import (
	"net/url"
	"testing"
	"time"
)

// TestMoveOutcomeWire: a μ-shard's last manual request and a request in
// the migrations list carry the outcome under the documented names; a
// μ-shard without one and a move in flight leave the fields out, so
// their bodies are what they were.
func TestMoveOutcomeWire(t *testing.T) {
	loc := newLocTable()
	until := t1.Add(time.Hour)
	m := loc.rows["p/x 7%"]
	m.LastRequest = &MoveOutcome{To: "c", Outcome: "waiting", Reason: "return_wait", At: t1, Until: &until, Epoch: 1}
	loc.rows["p/x 7%"] = m
	s := startLocalityServer(t, newState(), loc)

	body := do(t, s, "GET", "/admin/v1/locality/mushards/"+url.PathEscape("p/x 7%"), "", "").json(t)
	lr, _ := body["last_request"].(map[string]any)
	if lr["to"] != "c" || lr["outcome"] != "waiting" || lr["reason"] != "return_wait" || lr["at"] != t1.Format(time.RFC3339) ||
		lr["until"] != until.Format(time.RFC3339) || lr["epoch"] != 1.0 {
		t.Fatalf("last_request: %v", body)
	}
	if body := do(t, s, "GET", "/admin/v1/locality/mushards/"+url.PathEscape("u: 42"), "", "").json(t); body["last_request"] != nil {
		t.Fatalf("no request, yet last_request: %v", body)
	}

	list := do(t, s, "GET", "/admin/v1/locality/migrations", "", "").json(t)["migrations"].([]any)
	for _, x := range list {
		g := x.(map[string]any)
		_, hasOutcome := g["outcome"]
		_, hasUntil := g["until"]
		if g["id"] == "u: 42" && (hasOutcome || hasUntil) {
			t.Fatalf("a move in flight with an outcome: %v", g)
		}
		if g["id"] == "p/x 7%" && (g["outcome"] != "waiting" || g["reason"] != "return_wait" || g["until"] != until.Format(time.RFC3339)) {
			t.Fatalf("the request listed: %v", g)
		}
	}
	if len(list) != 2 {
		t.Fatalf("migrations: %v", list)
	}
}
