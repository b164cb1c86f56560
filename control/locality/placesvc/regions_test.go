package placesvc_test

import (
	"context"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/control/locality/internal/harness"
	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/placesvc"
	"github.com/strata-cache/strata/control/store"
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
	harness.Eventually(t, "p1 leads", func() bool { return r.Leading() != nil })
	for _, c := range []struct {
		m    *locsvc.Service
		name string
	}{{ma, "u: 1"}, {mb, "u: 2"}, {ma, "u: 3"}} {
		if _, err := resolve(t, c.m, c.name); err != nil {
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
	srv, err := admin.New(admin.Config{Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)},
		admin.Deps{Locality: view, Regions: view.RegionView("a", 0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	cl := admin.NewClient(srv.Addr(), "", 10*time.Second)
	harness.Eventually(t, "the leader's counts", func() bool {
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
