package locality_test

import (
	"log"

	"github.com/strata-cache/strata/tiers/locality/keyrule"
	"github.com/strata-cache/strata/tiers/locality/loccache"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/tiers/embedded"
	"github.com/strata-cache/strata/tiers/locality"
	"github.com/strata-cache/strata/tiers/locality/link"
)

// Example composes one region's strata: the router wraps the local tiers,
// the link client is lent the proxy's loops, the proxy listens for region
// links, and the router resumes requests through the proxy's loop runner.
// The directory is the location service (control/locality/locsvc), which
// also calls the router's Update for every row change it watches.
func Example() {
	local, _ := embedded.New(embedded.Config{})
	rules, _ := keyrule.New(keyrule.Config{Rules: []keyrule.Rule{{Prefix: "u:", Tag: true}}})
	links, err := link.New(link.Config{Peers: map[string]string{"b": "10.0.2.1:11311"}})
	if err != nil {
		log.Fatal(err)
	}
	var directory locality.Directory = &syncDir{loc: loccache.Location{Owner: "a", Epoch: 1, State: loccache.Stable}}
	router, err := locality.New(locality.Config{Region: "a"},
		locality.Deps{Inner: local, Rules: rules, Directory: directory, Links: links})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := proxy.New(proxy.Config{Listen: "127.0.0.1:0"}, router,
		proxy.WithLoopUsers(links), proxy.WithLink("127.0.0.1:0"))
	if err != nil {
		log.Fatal(err)
	}
	router.SetExecutor(srv.RunOnLoop)
	_ = srv // srv.Start(); on shutdown srv.Stop, then links.Close
}
