package placesvc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/control/locality/internal/harness"
	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/placesvc"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/poll"
)

// TestAdminRegions: GET /admin/v1/locality/regions over a RegionView of
// either store, from the counter batches as members write them: summed
// from the rows by a strata that does not lead the placement service, and
// from the leader's merged counts by one that does; an answer is reused
// for the window given, on the view's clock.
func TestAdminRegions(t *testing.T) { each(t, testAdminRegions) }

func testAdminRegions(t *testing.T, env harness.Env) {
	ctx := ctxT(t)
	r, rc, _ := runner(t, env, "p1", 50*time.Millisecond)
	ma, mb := member(t, env, "a", "ma"), member(t, env, "b", "mb")
	poll.Until(t, harness.Wait, "p1 leads", func() bool { return r.Leading() != nil })
	for _, c := range []struct {
		m    *locsvc.Service
		name string
	}{{ma, "u: 1"}, {mb, "u: 2"}, {ma, "u: 3"}} {
		if _, err := harness.Resolve(t, c.m, c.name, false); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now
	if env.Clock != nil {
		now = env.Clock.Now
	}
	lay := locsvc.NewLayout("")
	ship := func(member, region string, counts ...locsvc.Count) {
		t.Helper()
		b := locsvc.EncodeBatch(locsvc.Batch{Region: region, At: now(), Counts: counts})
		if _, err := store.PutRow(ctx, rc, lay.CounterKey(member, 0), b); err != nil {
			t.Fatal(err)
		}
	}
	// u: 1 and u: 3 are a's, u: 2 is b's.
	ship("xa", "a", locsvc.Count{Name: "u: 1", N: 10}, locsvc.Count{Name: "u: 2", N: 4, Remote: true})
	ship("xb", "b", locsvc.Count{Name: "u: 2", N: 6}, locsvc.Count{Name: "u: 3", N: 5, Remote: true})
	want := []admin.RegionLocality{
		{Region: "a", Requests: 14, Remote: 4, MuShards: 2},
		{Region: "b", Requests: 11, Remote: 5, MuShards: 1},
		{Region: "c"},
	}
	regions := []string{"a", "b", "c"}

	// A strata that does not lead: the members' last batches.
	rs, err := placesvc.NewView(rc, "", regions, nil, nil).RegionView("c", 0).Regions(ctx)
	if err != nil || rs.Self != "c" || !reflect.DeepEqual(rs.Regions, want) {
		t.Fatalf("from the batches: %+v %v", rs, err)
	}

	// The leader's strata, through the admin API.
	view := placesvc.NewView(rc, "", regions, r, now)
	srv := startAdmin(t, view)
	cl := admin.NewClient(srv.Addr(), "", 10*time.Second)
	poll.Until(t, harness.Wait, "the leader's counts", func() bool {
		rs, err = cl.LocalityRegions(ctx)
		return err == nil && rs.Self == "a" && reflect.DeepEqual(rs.Regions, want)
	})

	// Reuse: a batch written meanwhile shows once the window has passed.
	clock := harness.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	rv := placesvc.NewView(rc, "", regions, nil, clock.Now).RegionView("a", placesvc.RegionsEvery)
	if rs, err := rv.Regions(ctx); err != nil || !reflect.DeepEqual(rs.Regions, want) {
		t.Fatalf("first answer: %+v %v", rs, err)
	}
	ship("xc", "c", locsvc.Count{Name: "u: 1", N: 9, Remote: true})
	clock.Add(placesvc.RegionsEvery - time.Millisecond)
	if rs, err := rv.Regions(ctx); err != nil || !reflect.DeepEqual(rs.Regions, want) {
		t.Fatalf("within the window: %+v %v", rs, err)
	}
	clock.Add(time.Millisecond)
	want[2] = admin.RegionLocality{Region: "c", Requests: 9, Remote: 9}
	if rs, err := rv.Regions(ctx); err != nil || !reflect.DeepEqual(rs.Regions, want) {
		t.Fatalf("after the window: %+v %v", rs, err)
	}
}

// TestAdminRegionsCapacity: the regions route shows each region's cache
// memory and whether the placement service counts it full, from the
// freshest fresh report of its members, and nothing for a region without
// one; the other fields stay as they were.
func TestAdminRegionsCapacity(t *testing.T) { each(t, testAdminRegionsCapacity) }

func testAdminRegionsCapacity(t *testing.T, env harness.Env) {
	ctx := ctxT(t)
	rc := env.Connect(t)
	clock := harness.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	lay := locsvc.NewLayout("")
	for member, c := range map[string]locsvc.Capacity{
		"ma1": {Region: "a", Used: 80, Limit: 100, At: clock.Now().Add(-time.Second)},
		"ma2": {Region: "a", Used: 95, Limit: 100, At: clock.Now()},
		"mb":  {Region: "b", Used: 10, Limit: 100, At: clock.Now()},
		"mc":  {Region: "c", Used: 99, Limit: 100, At: clock.Now().Add(-time.Minute)}, // stale
	} {
		if _, err := store.PutRow(ctx, rc, lay.CapacityKey(member), locsvc.EncodeCapacity(c)); err != nil {
			t.Fatal(err)
		}
	}
	view := placesvc.NewView(rc, "", []string{"a", "b", "c"}, nil, clock.Now).WithCapacity(0.9, 30*time.Second)
	srv := startAdmin(t, view)
	resp, err := http.Get("http://" + srv.Addr() + "/admin/v1/locality/regions")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s %v", resp.StatusCode, body, err)
	}
	want := `{"self":"a","regions":[` +
		`{"region":"a","requests":0,"remote":0,"mushards":0,"used_bytes":95,"limit_bytes":100,"over_capacity":true},` +
		`{"region":"b","requests":0,"remote":0,"mushards":0,"used_bytes":10,"limit_bytes":100,"over_capacity":false},` +
		`{"region":"c","requests":0,"remote":0,"mushards":0}]}`
	var compact bytes.Buffer
	if err := json.Compact(&compact, body); err != nil {
		t.Fatal(err)
	}
	if got := compact.String(); got != want {
		t.Fatalf("GET /admin/v1/locality/regions:\n got %s\nwant %s", got, want)
	}
}

// startAdmin serves view's locality and region endpoints (as region a's
// strata) on a loopback port until the test ends.
func startAdmin(t *testing.T, view *placesvc.View) *admin.Server {
	t.Helper()
	srv, err := admin.New(admin.Config{Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)},
		admin.Deps{Locality: view, Regions: view.RegionView("a", 0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	return srv
}
