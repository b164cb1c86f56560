package placesvc_test

import (
	"context"
	"fmt"
	"time"

	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/placesvc"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/placement"
	"github.com/strata-cache/strata/tiers/locality/loccache"
)

// The composition of one strata alone on the memory store: its location
// service (the router's Directory; here nothing routes, so nil is its
// Updater) and a placement service candidate; an operator moves a μ-shard
// through the admin API's View, and reads the μ-shards each region owns
// through its RegionView (cmd/strata sets admin.Deps{Locality: view,
// Regions: view.RegionView(region, placesvc.RegionsEvery)}).
func Example() {
	m := store.NewMemory(store.MemoryOptions{})
	ctx := context.Background()

	loc, _ := locsvc.New(locsvc.Config{Region: "eu", Member: "eu-1"}, m.Connect())
	loc.Start(nil) // cmd/strata passes the router (tiers/locality) here
	defer loc.Stop(ctx)

	regions := []string{"eu", "us"}
	run, _ := placesvc.NewRunner(placesvc.Config{
		Regions: regions, Candidate: "eu-1", Grace: 50 * time.Millisecond, Tick: 10 * time.Millisecond,
		Policy: placement.LocalityPolicy{MaxTTL: time.Hour, MinInterval: time.Hour},
	}, m.Connect(), nil)
	run.Start()
	defer run.Stop(ctx)
	view := placesvc.NewView(m.Connect(), "", regions, run, nil)

	deadline := time.Now().Add(30 * time.Second) // a bound, in case it breaks
	for !loc.Ready() && time.Now().Before(deadline) {
		<-time.After(time.Millisecond)
	}
	// A μ-shard seen for the first time: the placement service creates it,
	// owned by the asking region.
	got := make(chan loccache.Location, 1)
	loc.Resolve("u: 42", false, func(l loccache.Location, err error) { got <- l })
	l := <-got
	fmt.Println(l.Owner, l.Epoch, l.State)

	if _, err := view.Migrate(ctx, "u: 42", "us"); err != nil {
		fmt.Println(err)
		return
	}
	for time.Now().Before(deadline) {
		ms, _ := view.MuShard(ctx, "u: 42")
		if ms.Owner == "us" && ms.State == "stable" {
			fmt.Println(ms.Owner, ms.Epoch, ms.State, ms.History[1].Reason)
			break
		}
		<-time.After(time.Millisecond)
	}
	rs, _ := view.RegionView("eu", placesvc.RegionsEvery).Regions(ctx)
	for _, r := range rs.Regions {
		fmt.Printf("%s owns %d\n", r.Region, r.MuShards)
	}
	// Output:
	// eu 1 stable
	// us 2 stable manual
	// eu owns 0
	// us owns 1
}
