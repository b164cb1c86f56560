package placesvc_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/control/locality/internal/harness"
	"github.com/strata-cache/strata/control/locality/placesvc"
	"github.com/strata-cache/strata/internal/poll"
)

// TestAdminMoveOutcome: a manual move the placement service holds back
// (return_wait: the μ-shard left that region less than max_ttl + grace
// ago) answers 202, and then says so in GET …/mushards/{id}
// (last_request) and in GET …/migrations (outcome), read through a view
// on another client than the leader's; a later request clears it and
// shows its own outcome once decided. On the memory store, whose clock
// the test moves, a successor leader adopts a waiting request from its
// row and carries it out when the wait is over.
func TestAdminMoveOutcome(t *testing.T) { each(t, testAdminMoveOutcome) }

func testAdminMoveOutcome(t *testing.T, env harness.Env) {
	ctx := ctxT(t)
	r, rc, _ := runner(t, env, "p1", 50*time.Millisecond)
	m := member(t, env, "a", "ma")
	poll.Until(t, harness.Wait, "p1 leads", func() bool { return r.Leading() != nil })
	const id = "u: 9"
	if _, err := harness.Resolve(t, m, id, false); err != nil {
		t.Fatal(err)
	}
	view := placesvc.NewView(env.Connect(t), "", []string{"a", "b", "c"}, nil, nil)
	srv, err := admin.New(admin.Config{Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)}, admin.Deps{Locality: view})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	cl := admin.NewClient(srv.Addr(), "", 10*time.Second)

	decided := func(what string, ok func(*admin.MoveOutcome) bool) admin.MuShard {
		t.Helper()
		var ms admin.MuShard
		poll.Until(t, harness.Wait, what, func() bool {
			env.Elapse(t, 10*time.Millisecond)
			ms, err = cl.MuShard(ctx, id)
			return err == nil && ms.LastRequest != nil && ok(ms.LastRequest)
		})
		return ms
	}
	if _, err := cl.MigrateMuShard(ctx, id, "b"); err != nil {
		t.Fatal(err)
	}
	ms := decided("the move to b started", func(o *admin.MoveOutcome) bool { return o.To == "b" && o.Outcome == "started" })
	if o := ms.LastRequest; o.Reason != "manual" || o.Epoch != 2 || o.Until != nil {
		t.Fatalf("started: %+v", o)
	}
	poll.Until(t, harness.Wait, "the move to b settled", func() bool {
		env.Elapse(t, 10*time.Millisecond)
		ms, err := cl.MuShard(ctx, id)
		return err == nil && ms.Owner == "b" && ms.State == "stable"
	})

	// Back to a at once: held back until a's old copies expired.
	if ms, err := cl.MigrateMuShard(ctx, id, "a"); err != nil || ms.Requested != "a" || ms.LastRequest != nil {
		t.Fatalf("migrate back: %+v %v", ms, err)
	}
	ms = decided("the move back waiting", func(o *admin.MoveOutcome) bool { return o.To == "a" })
	promoted := ms.History[len(ms.History)-1].At
	o := ms.LastRequest
	// Stored to the millisecond.
	if o.Outcome != "waiting" || o.Reason != "return_wait" || o.Epoch != 2 || o.Until == nil || !o.Until.Equal(promoted.Add(time.Hour+50*time.Millisecond).Truncate(time.Millisecond)) {
		t.Fatalf("waiting: %+v (promoted %v)", o, promoted)
	}
	list, err := cl.LocalityMigrations(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("migrations: %+v %v", list, err)
	}
	if g := list[0]; g.ID != id || g.From != "b" || g.To != "a" || g.Epoch != 2 || g.State != "stable" || g.Outcome != "waiting" ||
		g.Reason != "return_wait" || g.Until == nil || !g.Until.Equal(*o.Until) || !g.Since.Equal(o.At) {
		t.Fatalf("migrations: %+v", g)
	}
	// The wire names, as `strata ctl locality` prints them.
	var raw struct {
		LastRequest map[string]any `json:"last_request"`
	}
	getJSON(t, "http://"+srv.Addr()+"/admin/v1/locality/mushards/"+url.PathEscape(id), &raw)
	if raw.LastRequest["outcome"] != "waiting" || raw.LastRequest["reason"] != "return_wait" || raw.LastRequest["until"] == nil {
		t.Fatalf("last_request on the wire: %v", raw.LastRequest)
	}
	var rawList struct {
		Migrations []map[string]any `json:"migrations"`
	}
	getJSON(t, "http://"+srv.Addr()+"/admin/v1/locality/migrations", &rawList)
	if len(rawList.Migrations) != 1 || rawList.Migrations[0]["outcome"] != "waiting" || rawList.Migrations[0]["until"] == nil {
		t.Fatalf("migrations on the wire: %v", rawList.Migrations)
	}

	// A request to c replaces it: c never held the μ-shard.
	if ms, err := cl.MigrateMuShard(ctx, id, "c"); err != nil || ms.LastRequest != nil {
		t.Fatalf("migrate to c: %+v %v", ms, err)
	}
	ms = decided("the move to c started", func(o *admin.MoveOutcome) bool { return o.To == "c" })
	if o := ms.LastRequest; o.Outcome != "started" || o.Epoch != 3 {
		t.Fatalf("to c: %+v", o)
	}
	poll.Until(t, harness.Wait, "the move to c settled, the waiting request gone", func() bool {
		env.Elapse(t, 10*time.Millisecond)
		list, err := cl.LocalityMigrations(ctx)
		return err == nil && len(list) == 0
	})
	if env.Memory == nil {
		return // the rest moves the clock an hour
	}

	// Back to b waits; the leader dies; its successor adopts the request
	// from the row and carries it out once b's copies expired.
	if _, err := cl.MigrateMuShard(ctx, id, "b"); err != nil {
		t.Fatal(err)
	}
	ms = decided("the move to b waiting", func(o *admin.MoveOutcome) bool { return o.To == "b" && o.Outcome == "waiting" })
	kill(t, env, rc)
	if err := r.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	r2, _, _ := runner(t, env, "p2", 50*time.Millisecond)
	poll.Until(t, harness.Wait, "p2 leads", func() bool { return r2.Leading() != nil })
	env.Elapse(t, ms.LastRequest.Until.Sub(env.Clock.Now()))
	ms = decided("the adopted move to b started", func(o *admin.MoveOutcome) bool { return o.To == "b" && o.Outcome == "started" })
	if ms.LastRequest.Epoch != 4 {
		t.Fatalf("adopted: %+v", ms.LastRequest)
	}
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}
