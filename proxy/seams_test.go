package proxy

import (
	"testing"

	"github.com/strata-cache/strata/proxy/protocol"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/memcached"
)

// phased asks for phase 2 on every request, like the layering's writes.
type phased struct{}

var _ tiers.Tier = phased{}

func (phased) Do(op *tiers.Op)            { op.Done(op) }
func (phased) Phase(*tiers.Request) uint8 { return 2 }

// TestOrderingOnlyWithPools: the tier's phases matter only when some tier
// can answer after Do returns, which only the pools the server owns do;
// without them the server does no ordering work and schedules no flushes.
func TestOrderingOnlyWithPools(t *testing.T) {
	set := &protocol.Command{Reqs: []tiers.Request{{Kind: tiers.KindSet, Key: []byte("k")}}}
	sync, err := New(Config{Listen: "127.0.0.1:0"}, phased{})
	if err != nil {
		t.Fatal(err)
	}
	if ph := sync.phaseOf(set); ph != 0 || sync.async {
		t.Errorf("without pools: phase %d, async %v; want 0, false", ph, sync.async)
	}
	p, err := memcached.New(memcached.Config{Servers: []memcached.Server{{Addr: "127.0.0.1:1"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	withPool, err := New(Config{Listen: "127.0.0.1:0"}, phased{}, WithPools(p))
	if err != nil {
		t.Fatal(err)
	}
	if ph := withPool.phaseOf(set); ph != 2 || !withPool.async {
		t.Errorf("with a pool: phase %d, async %v; want 2, true", ph, withPool.async)
	}
	if ph := withPool.phaseOf(&protocol.Command{}); ph != 0 {
		t.Errorf("a command without requests: phase %d, want 0", ph)
	}
}
