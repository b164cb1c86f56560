package locality_test

import (
	"log"

	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/tiers/embedded"
	"github.com/strata-cache/strata/tiers/locality"
	"github.com/strata-cache/strata/tiers/locality/keyrule"
	"github.com/strata-cache/strata/tiers/locality/link"
	"github.com/strata-cache/strata/tiers/locality/loccache"
)

// Example composes one region's strata: the loop handle comes first; the
// link client joins it and the router resumes requests through it; the
// proxy, built on the same handle, starts and flushes the link client and
// listens for region links.
// The directory is the location service (control/locality/locsvc), which
// also calls the router's Update for every row change it watches.
func Example() {
	local, _ := embedded.New(embedded.Config{})
	rules, _ := keyrule.New(keyrule.Config{Rules: []keyrule.Rule{{Prefix: "u:", Tag: true}}})
	cfg := proxy.Config{Listen: "127.0.0.1:0"}
	loops, err := proxy.NewLoops(cfg.Loops)
	if err != nil {
		log.Fatal(err)
	}
	links, err := link.New(link.Config{Peers: map[string]string{"b": "10.0.2.1:11311"}}, loops)
	if err != nil {
		log.Fatal(err)
	}
	var directory locality.Directory = &syncDir{loc: loccache.Location{Owner: "a", Epoch: 1, State: loccache.Stable}}
	router, err := locality.New(locality.Config{Region: "a"},
		locality.Deps{Inner: local, Rules: rules, Directory: directory, Links: links, Loops: loops})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := proxy.New(cfg, router, loops, proxy.WithLink("127.0.0.1:0"))
	if err != nil {
		log.Fatal(err)
	}
	_ = srv // srv.Start(); on shutdown srv.Stop, then links.Close
}
