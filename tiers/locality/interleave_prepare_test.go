package locality_test

import (
	"testing"

	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/embedded"
	"github.com/strata-cache/strata/tiers/locality"
	"github.com/strata-cache/strata/tiers/locality/keyrule"
	"github.com/strata-cache/strata/tiers/locality/link"
	"github.com/strata-cache/strata/tiers/locality/linkproto"
	"github.com/strata-cache/strata/tiers/locality/loccache"
)

// pairLinks are one region's links to the one other region, held as
// heldLinks holds them: the test carries each request to the other
// region's tier and completes it when it chooses.
type pairLinks struct {
	peer string
	held []heldSend
}

func (p *pairLinks) Peer(region string) int {
	if region == p.peer {
		return 0
	}
	return -1
}
func (p *pairLinks) Send(_ int, op *tiers.Op, tok linkproto.Token) {
	p.held = append(p.held, heldSend{op, tok})
}
func (p *pairLinks) Stats() link.Stats { return link.Stats{} }

// heldRegion is one region of a two-region rig: its locality tier over its
// own local tiers, in its own view of the μ-shard.
type heldRegion struct {
	tier  *locality.Tier
	links *pairLinks
}

func newHeldRegion(t *testing.T, name, peer string, loc loccache.Location) *heldRegion {
	t.Helper()
	inner, err := embedded.New(embedded.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rules, _ := keyrule.New(keyrule.Config{Rules: []keyrule.Rule{{Prefix: "u:", Tag: true}}})
	links := &pairLinks{peer: peer}
	tier, err := locality.New(locality.Config{Region: name}, locality.Deps{Inner: inner, Rules: rules, Directory: &syncDir{loc: loc}, Links: links, Loops: inline{}})
	if err != nil {
		t.Fatal(err)
	}
	return &heldRegion{tier: tier, links: links}
}

// carry runs r's held request i at region to, as the link listener
// there would, and returns its answer without completing the request:
// the sender sees the answer only when the test calls complete.
func (r *heldRegion) carry(t *testing.T, i int, to *heldRegion) tiers.Result {
	t.Helper()
	s := r.links.held[i]
	op := &tiers.Op{Req: s.op.Req}
	op.Req.Link, op.Req.LinkSource, op.Req.LinkEpoch = true, s.tok.Source, s.tok.Epoch
	var done bool
	op.Done = func(*tiers.Op) { done = true }
	to.tier.Do(op)
	if !done {
		t.Fatalf("held request %d (%+v) did not complete at the other region", i, op.Req)
	}
	return op.Res
}

func (r *heldRegion) complete(i int, res tiers.Result) {
	s := r.links.held[i]
	s.op.Res = res
	s.op.Done(s.op)
}

// TestPrepareDeleteRacingAFill: region a, the source, still serves a
// μ-shard in Prepare while region b's view is already Migrating, so b
// fills from a. A delete at a and a read at b interleave in the worst
// order the links allow: the delete has run at one region and not yet
// at the other when b's read misses, takes its lease, reads a and
// stores. Once the delete is acknowledged, no read at b may return the
// old value.
func TestPrepareDeleteRacingAFill(t *testing.T) {
	a := newHeldRegion(t, "a", "b", loccache.Location{Owner: "b", Epoch: 2, State: loccache.Prepare, Source: "a"})
	b := newHeldRegion(t, "b", "a", loccache.Location{Owner: "b", Epoch: 2, State: loccache.Migrating, Source: "a"})
	done := map[*tiers.Op]bool{}
	newOp := func(r tiers.Request) *tiers.Op {
		op := &tiers.Op{Req: r}
		op.Done = func(op *tiers.Op) { done[op] = true }
		return op
	}
	key := []byte("u:{1}:k")
	a.tier.Do(newOp(tiers.Request{Kind: tiers.KindSet, Key: key, Value: []byte("old")}))
	if len(a.links.held) != 1 {
		t.Fatalf("the seeding set sent %d requests to b", len(a.links.held))
	}
	a.complete(0, a.carry(t, 0, b)) // its delete at b
	a.links.held = nil

	del := newOp(tiers.Request{Kind: tiers.KindDelete, Key: key})
	a.tier.Do(del) // the delete at b is held, whatever ran before it
	if len(a.links.held) != 1 || done[del] {
		t.Fatalf("held %d, delete done %v", len(a.links.held), done[del])
	}
	delAtB := a.carry(t, 0, b) // it runs at b; a does not hear of it yet

	get := newOp(tiers.Request{Kind: tiers.KindGet, Key: key, WantValue: true, Text: true})
	b.tier.Do(get) // misses at b, takes the lease; its read of a is held
	if len(b.links.held) != 1 || done[get] {
		t.Fatalf("held %d at b, get done %v", len(b.links.held), done[get])
	}
	b.complete(0, b.carry(t, 0, a))
	if !done[get] {
		t.Fatal("the racing read is not answered")
	}
	t.Logf("the racing read: %v %q", get.Res.Status, get.Res.Value) // any answer: the delete is not acknowledged

	a.complete(0, delAtB)
	if !done[del] || del.Res.Status == tiers.StatusError {
		t.Fatalf("delete: %+v", del.Res)
	}
	// Acknowledged: no read may return "old" now.
	after := newOp(tiers.Request{Kind: tiers.KindGet, Key: key, WantValue: true, Text: true})
	b.tier.Do(after)
	for i := 1; !done[after] && i < len(b.links.held); i++ {
		b.complete(i, b.carry(t, i, a))
	}
	if !done[after] || after.Res.Status != tiers.StatusMiss {
		t.Fatalf("read at b after the acknowledged delete: %v %q", after.Res.Status, after.Res.Value)
	}
}
